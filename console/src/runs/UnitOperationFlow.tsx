/**
 * The run's unit operations as a left-to-right flow of cards joined by arrows: the
 * viewport scrolls horizontally and can be dragged with the pointer; ctrl/meta + wheel zooms.
 */
import { Button, ButtonGroup, Card, Elevation, Icon, Intent } from '@blueprintjs/core';
import { Fragment, useEffect, useRef, useState, type MouseEvent, type PointerEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { StatusPill } from '../components/StatusPill.tsx';
import { AppTooltip } from '../components/AppTooltip.tsx';
import { formatDate, titleCaseType } from '../entities/format.ts';
import { statusOf } from '../entities/run-metrics.ts';
import type { UnitOperation } from '../entities/types.ts';
import { zoomForWheel } from './zoom.ts';

/** A pointer that moved less than this is a click on a card, not a drag of the flow. */
const DRAG_THRESHOLD_PX = 4;

export interface UnitOperationFlowProps {
  runId: number;
  unitOperations: readonly UnitOperation[];
  equipmentName: (id: number | null | undefined) => string;
  zoom: number;
  onZoomChange: (update: (zoom: number) => number) => void;
  canEdit: boolean;
  canCreate: boolean;
  onAdd: () => void;
  onEdit: (unitOperation: UnitOperation) => void;
  onDelete: (unitOperation: UnitOperation) => void;
}

export function UnitOperationFlow({
  runId, unitOperations, equipmentName, zoom, onZoomChange, canEdit, canCreate, onAdd, onEdit, onDelete,
}: UnitOperationFlowProps) {
  const navigate = useNavigate();
  const viewportRef = useRef<HTMLDivElement>(null);
  const drag = useRef<{ x: number; y: number; left: number; top: number; moved: boolean } | null>(null);
  const suppressClick = useRef(false);
  const [dragging, setDragging] = useState(false);

  // React's onWheel is passive, and the browser's own page zoom must be prevented: listen natively.
  useEffect(() => {
    const viewport = viewportRef.current;
    if (!viewport) return undefined;
    const onWheel = (event: WheelEvent) => {
      if (!event.ctrlKey && !event.metaKey) return;
      event.preventDefault();
      onZoomChange((current) => zoomForWheel(current, event.deltaY));
    };
    viewport.addEventListener('wheel', onWheel, { passive: false });
    return () => viewport.removeEventListener('wheel', onWheel);
  }, [onZoomChange]);

  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    if (event.button !== 0 || !viewportRef.current) return;
    drag.current = { x: event.clientX, y: event.clientY, left: viewportRef.current.scrollLeft, top: viewportRef.current.scrollTop, moved: false };
    suppressClick.current = false;
  };
  const onPointerMove = (event: PointerEvent<HTMLDivElement>) => {
    const start = drag.current;
    const viewport = viewportRef.current;
    if (!start || !viewport) return;
    const dx = event.clientX - start.x;
    const dy = event.clientY - start.y;
    if (!start.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD_PX) return;
    if (!start.moved) {
      start.moved = true;
      setDragging(true);
    }
    viewport.scrollLeft = start.left - dx;
    viewport.scrollTop = start.top - dy;
  };
  const endDrag = () => {
    if (drag.current?.moved) suppressClick.current = true;
    drag.current = null;
    setDragging(false);
  };
  // A drag that ends over a card must not also open it.
  const onClickCapture = (event: MouseEvent) => {
    if (suppressClick.current) {
      event.stopPropagation();
      event.preventDefault();
      suppressClick.current = false;
    }
  };
  const stop = (event: MouseEvent) => event.stopPropagation();
  const showAddCard = canCreate || canEdit;

  return (
    <div
      ref={viewportRef}
      className={`app-flow-viewport${dragging ? ' app-dragging' : ''}`}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={endDrag}
      onPointerLeave={endDrag}
      onClickCapture={onClickCapture}
      data-testid="unit-operation-flow"
    >
      <div className="app-flow-track" style={{ zoom }} data-testid="unit-operation-track" data-zoom={zoom}>
        {unitOperations.map((operation, index) => (
          <Fragment key={operation.id}>
            {index > 0 ? <div className="app-flow-arrow" aria-hidden><Icon icon="arrow-right" size={22} /></div> : null}
            <Card
              interactive
              elevation={Elevation.ONE}
              className="app-unit-op-card"
              data-testid="unit-operation-card"
              role="link"
              tabIndex={0}
              aria-label={`${titleCaseType(operation.type)} unit operation`}
              onClick={() => navigate(`/runs/${runId}/unit-operations/${operation.id}`)}
              onKeyDown={(event) => { if (event.key === 'Enter') navigate(`/runs/${runId}/unit-operations/${operation.id}`); }}
            >
              <div className="app-unit-op-card-head">
                <h4 className="app-unit-op-card-title">{titleCaseType(operation.type)}</h4>
                <StatusPill status={statusOf(operation)} />
              </div>
              <dl className="app-unit-op-card-times">
                <dt>Start</dt><dd>{formatDate(operation.startTime)}</dd>
                <dt>End</dt><dd>{formatDate(operation.endTime)}</dd>
              </dl>
              <div className="app-unit-op-card-foot">
                <span className="app-unit-op-equipment"><Icon icon="cube" size={12} /> {operation.equipmentId ? equipmentName(operation.equipmentId) : 'No equipment'}</span>
                {canEdit && operation.equipmentId ? (
                  <ButtonGroup variant="minimal" onClick={stop} onPointerDown={(event) => event.stopPropagation()}>
                    <AppTooltip content="Edit unit operation">
                      <Button icon="edit" size="small" aria-label="Edit unit operation" onClick={() => onEdit(operation)} />
                    </AppTooltip>
                    <AppTooltip content="Delete unit operation">
                      <Button icon="trash" size="small" intent={Intent.DANGER} aria-label="Delete unit operation" onClick={() => onDelete(operation)} />
                    </AppTooltip>
                  </ButtonGroup>
                ) : null}
              </div>
            </Card>
          </Fragment>
        ))}
        {showAddCard ? (
          <>
            {unitOperations.length > 0 ? <div className="app-flow-arrow" aria-hidden><Icon icon="arrow-right" size={22} /></div> : null}
            <button type="button" className="app-add-unit-op-card" onClick={onAdd} onPointerDown={(event) => event.stopPropagation()}>
              <Icon icon="add" size={28} />
              Add Unit Operation
            </button>
          </>
        ) : null}
        {!showAddCard && unitOperations.length === 0 ? <div className="app-flow-empty bp6-text-muted">This run has no unit operations yet.</div> : null}
      </div>
    </div>
  );
}
