/**
 * The generic entity form for runs, equipment, facilities and instruments: create
 * when no record is given, edit otherwise. Every invalid field is marked at once, beside the field;
 * the banner is kept for what the server answers. Renders nothing for users who may neither create nor edit.
 */
import { Callout, Checkbox, FormGroup, HTMLSelect, InputGroup, Intent, TextArea } from '@blueprintjs/core';
import { useEffect, useMemo, useState } from 'react';
import { apiRequest } from '../api/client.ts';
import { useAuth } from '../auth/useAuth.ts';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { buildEntityBody, ENTITY_DEFINITIONS, initialValues, type EntityKind, type FieldDefinition, type FormValues } from './entity-forms.ts';
import { useEquipmentList, useFacilities, useRevalidate } from './queries.ts';
import './entities.css';
import { DateTimeField } from '../dates/DateTimeField.tsx';
import { catalogueTypeNames, catalogueUnitCodes } from '@bioprocess/shared/instruments/catalogue';
import { unitOptionLabel, useInstrumentCatalogue } from '../settings/use-instrument-catalogue.ts';

export interface EntityFormDialogProps {
  kind: EntityKind;
  isOpen: boolean;
  onClose: () => void;
  /** The record to edit (camelCase, as read from the API); absent for a create. */
  record?: { id: number } & Record<string, unknown>;
  /** Values a create starts with, by wire field name (e.g. the facility a new equipment belongs to). */
  defaults?: FormValues;
  onSaved?: (saved: Record<string, unknown>) => void;
}

const REVALIDATED_PATHS: Record<EntityKind, string[]> = {
  run: ['/api/v1/runs'],
  equipment: ['/api/v1/equipment', '/api/v1/unit-operation-types'],
  facility: ['/api/v1/facilities'],
  instrument: ['/api/v1/instruments', '/api/v1/equipment'],
};

export function EntityFormDialog({ kind, isOpen, onClose, record, defaults, onSaved }: EntityFormDialogProps) {
  const { permissions } = useAuth();
  const definition = ENTITY_DEFINITIONS[kind];
  const isEdit = record !== undefined;
  const [values, setValues] = useState<FormValues>(() => ({ ...initialValues(definition, record), ...(isEdit ? {} : defaults) }));
  const [error, setError] = useState<{ title: string; detail?: string } | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const revalidate = useRevalidate();
  const facilities = useFacilities();
  const equipment = useEquipmentList();
  const catalogue = useInstrumentCatalogue();

  // Each opening starts from the record (or the defaults) again, never from a previous attempt.
  useEffect(() => {
    if (!isOpen) return;
    setValues({ ...initialValues(definition, record), ...(record ? {} : defaults) });
    setError(null);
    setFieldErrors({});
    // Only the opening resets the form: a revalidated record or new defaults object must not wipe typing.
  }, [isOpen]);

  const loadedOptions = useMemo(() => ({
    facilities: (facilities.data ?? []).map((facility) => ({ value: String(facility.id), label: facility.name })),
    equipment: (equipment.data ?? []).map((item) => ({ value: String(item.id), label: item.name })),
  }), [facilities.data, equipment.data]);

  /** An instrument's type and unit pickers offer the organisation's own beside the spec's, and keep a stored value no list has. */
  const catalogueOptions = (field: FieldDefinition, current: string) => {
    if (kind !== 'instrument' || (field.key !== 'type' && field.key !== 'unit')) return undefined;
    const codes = field.key === 'type' ? catalogueTypeNames({ types: catalogue.data?.types ?? [] }) : catalogueUnitCodes({ units: catalogue.data?.units ?? [] });
    if (current && !codes.includes(current)) codes.push(current);
    return codes.map((code) => ({ value: code, label: field.key === 'unit' ? unitOptionLabel(catalogue.data, code) : code }));
  };

  if (!(permissions.canCreate || permissions.canEdit)) return null;

  const failure = `Failed to ${isEdit ? 'update' : 'create'} ${definition.messageName}.`;

  const submit = async () => {
    const built = buildEntityBody(definition, values);
    if ('error' in built) {
      setFieldErrors(built.fieldErrors);
      setError(null);
      return;
    }
    setFieldErrors({});
    setBusy(true);
    setError(null);
    try {
      const saved = isEdit
        ? await apiRequest<Record<string, unknown>>('PUT', `${definition.collectionPath}/${record.id}`, built.body)
        : await apiRequest<Record<string, unknown>>('POST', definition.collectionPath, built.body);
      await revalidate(...REVALIDATED_PATHS[kind]);
      onSaved?.(saved ?? {});
      onClose();
    } catch (cause) {
      console.error(failure, cause);
      setError({ title: failure, detail: cause instanceof Error ? cause.message : undefined });
    } finally {
      setBusy(false);
    }
  };

  const setValue = (key: string, value: string) => {
    setValues((current) => ({ ...current, [key]: value }));
    // A corrected field loses its mark at once; the others keep theirs until the next submit.
    setFieldErrors((current) => {
      if (!(key in current)) return current;
      const { [key]: _fixed, ...rest } = current;
      return rest;
    });
  };

  return (
    <FormDialog
      title={`${isEdit ? 'Edit' : 'Create'} ${definition.label}`}
      isOpen={isOpen}
      onClose={onClose}
      onSubmit={submit}
      submitLabel={isEdit ? 'Save' : 'Create'}
      busy={busy}
      size="xl"
    >
      <div className="app-entity-form">
        {definition.fields.map((field) => {
          const fieldError = fieldErrors[field.key];
          return (
            <FormGroup key={field.key} label={field.label} labelFor={`entity-${field.key}`} labelInfo={field.required ? '(required)' : undefined}
              className={field.kind === 'textarea' ? 'app-entity-form-wide' : undefined}
              intent={fieldError ? Intent.DANGER : Intent.NONE} helperText={fieldError}>
              <FieldInput field={field} value={values[field.key] ?? ''} onChange={(value) => setValue(field.key, value)}
                invalid={Boolean(fieldError)} options={field.optionSource ? loadedOptions[field.optionSource] : catalogueOptions(field, values[field.key] ?? '')}
                checkedByDefault={field.checkedByDefault?.(values)} />
            </FormGroup>
          );
        })}
      </div>
      {error ? (
        <Callout intent={Intent.DANGER} icon="error" className="app-entity-form-error" title={error.detail ? error.title : undefined}>
          {error.detail ?? error.title}
        </Callout>
      ) : null}
    </FormDialog>
  );
}

interface FieldInputProps {
  field: FieldDefinition;
  value: string;
  onChange: (value: string) => void;
  invalid?: boolean;
  options?: { value: string; label: string }[];
  checkedByDefault?: boolean;
}

function FieldInput({ field, value, onChange, invalid = false, options, checkedByDefault = false }: FieldInputProps) {
  const id = `entity-${field.key}`;
  const intent = invalid ? Intent.DANGER : Intent.NONE;
  const aria = { 'aria-invalid': invalid || undefined };
  switch (field.kind) {
    case 'textarea':
      return <TextArea id={id} fill rows={3} value={value} intent={intent} {...aria} onChange={(event) => onChange(event.target.value)} />;
    case 'number':
      // A text field with a decimal keyboard: any typed value (negative, many decimals) stays as typed
      // and is judged on submit, beside the field.
      return <InputGroup id={id} inputMode="decimal" value={value} intent={intent} {...aria} onChange={(event) => onChange(event.target.value)} />;
    case 'datetime':
      return <DateTimeField id={id} value={value} intent={intent} {...aria} onChange={onChange} />;
    case 'checkbox':
      // An untouched box on a new form sends nothing, so the server's default for the type holds.
      return <Checkbox id={id} checked={value === '' ? checkedByDefault : value === 'true'} label="Yes" onChange={(event) => onChange(event.currentTarget.checked ? 'true' : 'false')} />;
    case 'select': {
      const choices = options ?? (field.options ?? []).map((option) => ({ value: option, label: option }));
      return (
        <HTMLSelect id={id} fill value={value} {...aria} onChange={(event) => onChange(event.target.value)}>
          <option value="" disabled={field.required}>{field.required ? `Select ${field.label.toLowerCase()}...` : 'None'}</option>
          {choices.map((choice) => <option key={choice.value} value={choice.value}>{choice.label}</option>)}
        </HTMLSelect>
      );
    }
    default:
      return <InputGroup id={id} value={value} intent={intent} {...aria} onChange={(event) => onChange(event.target.value)} />;
  }
}
