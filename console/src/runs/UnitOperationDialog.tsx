/**
 * Create or edit a unit operation. In edit mode type, equipment, start and end
 * are locked. The CSV upload of the time-series issue plugs in through `csvSection`: it sees the form
 * state and registers a submit hook to block the submit, check before saving and upload after it.
 */
import { Callout, FormGroup, HTMLSelect, InputGroup, Intent } from '@blueprintjs/core';
import { UNIT_OPERATION_TYPES } from '@bioprocess/shared/enums';
import { validateDateRange } from '@bioprocess/shared/date-range';
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { apiRequest } from '../api/client.ts';
import { UNIT_OPERATION_PROPERTIES, UNIT_OPERATION_PROPERTY_NAMES } from '@bioprocess/shared/derived/properties';
import { useApi } from '../api/hooks.ts';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { titleCaseType, toDateTimeLocal } from '../entities/format.ts';
import { useEquipmentList, useRevalidate } from '../entities/queries.ts';
import '../entities/entities.css';
import { unitOperationSchema, unitOperationTypeListSchema, type UnitOperation, type UnitOperationTypeOption } from '../entities/types.ts';
import { DateTimeField } from '../dates/DateTimeField.tsx';
import { wallTimeToIso } from '../dates/date-time-format.ts';

export const REQUIRED_FIELDS_MESSAGE = 'Please fill in all required fields.';

/** What the dialog's form holds, as the CSV section needs it. Times are ISO strings or null. */
export interface UnitOperationFormState {
  mode: 'create' | 'edit';
  runId: number;
  /** The unit operation being edited (edit mode only). */
  unitOperation: UnitOperation | null;
  type: string;
  equipmentId: number | null;
  startTime: string | null;
  endTime: string | null;
}

export interface UnitOperationSubmitHook {
  /** While set, the submit button is disabled and reads this text (e.g. 'Complete Instrument Setup First'). */
  blockedLabel?: string | null;
  /**
   * Runs after the dialog's own checks and before the unit operation is saved. Return false to stop
   * the submit (after showing your own message); the dialog stays open.
   */
  beforeSave?: (state: UnitOperationFormState) => boolean | Promise<boolean>;
  /**
   * Runs after the unit operation was updated and before the dialog closes (the CSV upload into it).
   * Throwing keeps the dialog open; the update stays saved.
   */
  afterSave?: (saved: UnitOperation, state: UnitOperationFormState) => void | Promise<void>;
  /**
   * Create mode: creates the unit operation together with the upload, as one act (the server removes
   * it again when the upload fails). Resolves once the upload finished; throwing (after showing its own
   * message) keeps the dialog open, and no unit operation is left behind.
   */
  createWith?: (body: UnitOperationCreateBody, state: UnitOperationFormState) => Promise<UnitOperation>;
}

export interface UnitOperationCreateBody {
  run_id: number;
  type: string;
  equipment_id: number;
  start_time: string | null;
  end_time: string | null;
  properties?: Record<string, number | null>;
}

/** The properties as the api names them; the client hands them back camel-cased (workingVolume). */
const camelName = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

function propertyTexts(stored: Record<string, number> | undefined): Record<string, string> {
  return Object.fromEntries(UNIT_OPERATION_PROPERTY_NAMES.map((name) => {
    const value = stored?.[camelName(name)] ?? stored?.[name];
    return [name, value === undefined ? '' : String(value)];
  }));
}

/** Blank clears a property; anything else must be a finite number. */
function parsePropertyTexts(texts: Record<string, string>): { values: Record<string, number | null>; invalid: string[] } {
  const values: Record<string, number | null> = {};
  const invalid: string[] = [];
  for (const name of UNIT_OPERATION_PROPERTY_NAMES) {
    const text = (texts[name] ?? '').trim();
    if (text === '') { values[name] = null; continue; }
    const value = Number(text);
    if (Number.isFinite(value)) values[name] = value; else invalid.push(name);
  }
  return { values, invalid };
}

export interface UnitOperationDialogContext {
  state: UnitOperationFormState;
  /** Register (or clear with null) the submit hook; the latest registration wins. */
  setSubmitHook: (hook: UnitOperationSubmitHook | null) => void;
  /** True while the dialog saves or the afterSave hook runs. */
  busy: boolean;
}

export interface UnitOperationDialogProps {
  isOpen: boolean;
  onClose: () => void;
  runId: number;
  /** Edit mode when given. */
  unitOperation?: UnitOperation | null;
  onSaved?: (saved: UnitOperation) => void;
  /** The CSV upload section, rendered under the fields. */
  csvSection?: (context: UnitOperationDialogContext) => ReactNode;
  /** Anything else to render under the fields. */
  children?: ReactNode;
}

function toIso(local: string): string | null {
  if (!local.trim()) return null;
  return wallTimeToIso(local) ?? local;
}

export function UnitOperationDialog({ isOpen, onClose, runId, unitOperation, onSaved, csvSection, children }: UnitOperationDialogProps) {
  const mode = unitOperation ? 'edit' : 'create';
  const [type, setType] = useState('');
  const [equipmentId, setEquipmentId] = useState('');
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [busy, setBusy] = useState(false);
  const [propertyInputs, setPropertyInputs] = useState<Record<string, string>>({});
  const [submitHook, setSubmitHookState] = useState<UnitOperationSubmitHook | null>(null);
  const hookRef = useRef<UnitOperationSubmitHook | null>(null);
  const revalidate = useRevalidate();
  const types = useApi<UnitOperationTypeOption[]>(isOpen ? '/api/v1/unit-operation-types' : null, unitOperationTypeListSchema);
  const equipment = useEquipmentList();

  useEffect(() => {
    if (!isOpen) return;
    setType(unitOperation?.type ?? '');
    setEquipmentId(unitOperation?.equipmentId ? String(unitOperation.equipmentId) : '');
    setStart(toDateTimeLocal(unitOperation?.startTime));
    setEnd(toDateTimeLocal(unitOperation?.endTime));
    setPropertyInputs(propertyTexts(unitOperation?.properties));
  }, [isOpen, unitOperation]);
  const properties = parsePropertyTexts(propertyInputs);

  const setSubmitHook = useCallback((hook: UnitOperationSubmitHook | null) => {
    hookRef.current = hook;
    setSubmitHookState(hook);
  }, []);

  const typeOptions = useMemo(() => {
    const known = types.data?.map((option) => option.type);
    return known && known.length > 0 ? known : [...UNIT_OPERATION_TYPES];
  }, [types.data]);

  /** Equipment allowed for the chosen type; every equipment until the allowed lists are known. */
  const equipmentOptions = useMemo(() => {
    const all = equipment.data ?? [];
    const allowed = types.data?.find((option) => option.type === type)?.equipmentIds;
    const filtered = allowed ? all.filter((item) => allowed.includes(item.id)) : all;
    // The equipment of an edited unit operation stays listed even if the type no longer allows it.
    const current = all.find((item) => String(item.id) === equipmentId);
    return current && !filtered.includes(current) ? [current, ...filtered] : filtered;
  }, [equipment.data, types.data, type, equipmentId]);

  const state: UnitOperationFormState = {
    mode, runId, unitOperation: unitOperation ?? null, type,
    equipmentId: equipmentId ? Number(equipmentId) : null, startTime: toIso(start), endTime: toIso(end),
  };

  const submit = async () => {
    if (!type || !equipmentId) {
      showToast({ title: 'Validation Error', message: REQUIRED_FIELDS_MESSAGE, intent: 'danger' });
      return;
    }
    const rangeError = validateDateRange(state.startTime, state.endTime);
    if (rangeError) {
      showToast({ title: 'Validation Error', message: rangeError, intent: 'danger' });
      return;
    }
    if (properties.invalid.length > 0) {
      showToast({ title: 'Validation Error', message: `Not a number: ${properties.invalid.map((name) => UNIT_OPERATION_PROPERTIES[name as keyof typeof UNIT_OPERATION_PROPERTIES].label).join(', ')}`, intent: 'danger' });
      return;
    }
    const hook = hookRef.current;
    setBusy(true);
    try {
      if (hook?.beforeSave && !(await hook.beforeSave(state))) return;
      // A new unit operation sends only the properties given; an edit sends every one (blank clears it).
      const givenProperties = mode === 'edit' ? properties.values
        : Object.fromEntries(Object.entries(properties.values).filter(([, value]) => value !== null));
      const body: UnitOperationCreateBody = {
        run_id: runId, type, equipment_id: Number(equipmentId), start_time: state.startTime, end_time: state.endTime, properties: givenProperties,
      };
      let saved: UnitOperation;
      if (mode === 'create' && hook?.createWith) {
        try {
          saved = await hook.createWith(body, state);
        } catch (cause) {
          // The section showed what failed; the user stays here to fix it, with nothing created.
          console.error('Unit operation with its upload was not created', cause);
          await revalidate(`/api/v1/runs/${runId}`, '/api/v1/unit-operations');
          return;
        }
        // Before anything is awaited: the upload's own toast is queued to follow this one.
        showToast({ title: 'Unit operation created successfully.', intent: 'success' });
        await revalidate(`/api/v1/runs/${runId}`, '/api/v1/unit-operations');
        onSaved?.(saved);
        onClose();
        return;
      }
      try {
        saved = mode === 'edit'
          ? await apiRequest<UnitOperation>('PUT', `/api/v1/unit-operations/${unitOperation!.id}`, body, { schema: unitOperationSchema })
          : await apiRequest<UnitOperation>('POST', '/api/v1/unit-operations', body, { schema: unitOperationSchema });
      } catch (cause) {
        console.error(`Failed to ${mode} unit operation`, cause);
        showToast({ title: 'Error', message: `Failed to ${mode === 'edit' ? 'update' : 'create'} unit operation.`, intent: 'danger' });
        return;
      }
      await revalidate(`/api/v1/runs/${runId}`, '/api/v1/unit-operations');
      if (hook?.afterSave) {
        try {
          await hook.afterSave(saved, state);
        } catch (cause) {
          // The section reported its own failure; the unit operation itself is saved.
          console.error('Unit operation saved, but the follow-up step failed', cause);
          return;
        }
      }
      showToast({ title: mode === 'edit' ? 'Unit operation updated successfully.' : 'Unit operation created successfully.', intent: 'success' });
      onSaved?.(saved);
      onClose();
    } finally {
      setBusy(false);
    }
  };

  const locked = mode === 'edit';
  const blockedLabel = submitHook?.blockedLabel ?? null;

  return (
    <FormDialog
      title={mode === 'edit' ? 'Edit Unit Operation' : 'Add Unit Operation'}
      description={locked ? 'Type, equipment, start and end of an existing unit operation are locked.' : undefined}
      isOpen={isOpen}
      onClose={onClose}
      onSubmit={submit}
      busy={busy}
      submitDisabled={blockedLabel !== null}
      submitLabel={blockedLabel ?? (mode === 'edit' ? 'Save' : 'Create')}
      size="2xl"
    >
      <div className="app-entity-form">
        <FormGroup label="Type" labelFor="unit-op-type" labelInfo="(required)">
          <HTMLSelect id="unit-op-type" fill disabled={locked} value={type} onChange={(event) => setType(event.target.value)}>
            <option value="" disabled>Select type...</option>
            {typeOptions.map((option) => <option key={option} value={option}>{titleCaseType(option)}</option>)}
          </HTMLSelect>
        </FormGroup>
        <FormGroup label="Equipment" labelFor="unit-op-equipment" labelInfo="(required)"
          helperText={!locked && type && equipmentOptions.length === 0 ? 'No equipment is set up for this type yet.' : undefined}>
          <HTMLSelect id="unit-op-equipment" fill disabled={locked} value={equipmentId} onChange={(event) => setEquipmentId(event.target.value)}>
            <option value="" disabled>Select equipment...</option>
            {equipmentOptions.map((item) => <option key={item.id} value={String(item.id)}>{item.name}</option>)}
          </HTMLSelect>
        </FormGroup>
        <FormGroup label="Start Time" labelFor="unit-op-start" labelInfo="(optional)">
          <DateTimeField id="unit-op-start" disabled={locked} value={start} onChange={setStart} />
        </FormGroup>
        <FormGroup label="End Time" labelFor="unit-op-end" labelInfo="(optional)">
          <DateTimeField id="unit-op-end" disabled={locked} value={end} onChange={setEnd} />
        </FormGroup>
      </div>
      <details className="app-unit-operation-properties" data-testid="unit-operation-properties">
        <summary>Properties used by derived parameters (optional)</summary>
        <div className="app-entity-form">
          {UNIT_OPERATION_PROPERTY_NAMES.map((name) => {
            const property = UNIT_OPERATION_PROPERTIES[name];
            const invalid = properties.invalid.includes(name);
            return (
              <FormGroup key={name} label={`${property.label} (${property.unit})`} labelFor={`unit-op-property-${name}`}
                intent={invalid ? Intent.DANGER : Intent.NONE}
                helperText={invalid ? 'Must be a number' : property.default !== null ? `Default ${property.default}` : undefined}>
                <InputGroup id={`unit-op-property-${name}`} inputMode="decimal" value={propertyInputs[name] ?? ''} intent={invalid ? Intent.DANGER : Intent.NONE}
                  onChange={(event) => setPropertyInputs((inputs) => ({ ...inputs, [name]: event.target.value }))} />
              </FormGroup>
            );
          })}
        </div>
      </details>
      {types.error ? <Callout intent={Intent.WARNING} compact>Could not load the equipment allowed per type; all equipment is listed.</Callout> : null}
      {csvSection ? csvSection({ state, setSubmitHook, busy }) : null}
      {children}
    </FormDialog>
  );
}
