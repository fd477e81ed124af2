// A form built from a JSON Schema, and its value read back: the edit-before-approve form (a tool's
// input schema) and the form that answers an MCP server's question (its requested schema).

let fieldIds = 0;

/** A property's choices as [value, label] pairs: `enum` (with `enumNames`), or `oneOf`/`anyOf` of `const`s with titles. */
function choicesOf(property) {
  if (!property || typeof property !== 'object') return null;
  if (Array.isArray(property.enum)) return property.enum.map((value, index) => [value, String(property.enumNames?.[index] ?? value)]);
  const alternatives = property.oneOf ?? property.anyOf;
  if (Array.isArray(alternatives) && alternatives.length > 0 && alternatives.every((option) => option && 'const' in option)) {
    return alternatives.map((option) => [option.const, String(option.title ?? option.const)]);
  }
  return null;
}

/**
 * A form from a JSON Schema, into `fields`: a field per property (text — typed by `format` as
 * email, URL or date —, number, checkbox, choice, several choices), JSON for anything else; the
 * values start from `original`, else (with `useDefaults`) the property's `default`. Used for the edit-before-approve
 * form (a tool's input schema) and for an MCP server's question (its requested schema). The
 * browser checks the schema's simple rules; the turn validates against the full schema again and
 * refuses what fails.
 */
export function buildFields(fields, schema, original, onInput, useDefaults) {
  const properties = schema?.type === 'object' && schema.properties ? schema.properties : null;
  const entries = properties ? Object.entries(properties) : [['(input)', {}]];
  for (const [name, property] of entries) {
    const label = document.createElement('label');
    label.className = 'edit-field';
    const caption = document.createElement('span');
    caption.textContent = property.title && property.title !== name ? `${property.title} (${name})` : name;
    let control;
    const value = properties ? (original[name] ?? (useDefaults ? property.default : undefined)) : original;
    const required = properties ? (schema.required ?? []).includes(name) : true;
    const choices = choicesOf(property);
    const itemChoices = property.type === 'array' ? choicesOf(property.items) : null;
    let kind;
    if (choices) {
      kind = 'enum';
      control = document.createElement('select');
      if (!required) control.append(new Option('(none)', '', false, value === undefined));
      for (const [option, text] of choices) control.append(new Option(text, JSON.stringify(option), false, JSON.stringify(option) === JSON.stringify(value)));
    } else if (itemChoices) {
      kind = 'enums';
      control = document.createElement('select');
      control.multiple = true;
      control.size = Math.min(itemChoices.length, 5);
      const chosen = new Set((Array.isArray(value) ? value : []).map((item) => JSON.stringify(item)));
      for (const [option, text] of itemChoices) control.append(new Option(text, JSON.stringify(option), false, chosen.has(JSON.stringify(option))));
      control.dataset.minItems = property.minItems ?? '';
      control.dataset.maxItems = property.maxItems ?? '';
    } else if (property.type === 'number' || property.type === 'integer') {
      kind = 'number';
      control = document.createElement('input');
      control.type = 'number';
      control.step = property.type === 'integer' ? '1' : 'any';
      if (property.minimum !== undefined) control.min = property.minimum;
      if (property.maximum !== undefined) control.max = property.maximum;
      control.value = value ?? '';
    } else if (property.type === 'boolean') {
      kind = 'boolean';
      control = document.createElement('input');
      control.type = 'checkbox';
      control.checked = value === true;
    } else if (property.type === 'string') {
      kind = 'string';
      control = document.createElement('input');
      control.type = { email: 'email', uri: 'url', date: 'date' }[property.format] ?? 'text';
      if (property.format === 'date-time') {
        control.placeholder = 'YYYY-MM-DDThh:mm:ssZ';
        control.pattern = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+\\-]\\d{2}:\\d{2})';
      }
      if (property.minLength !== undefined) control.minLength = property.minLength;
      if (property.maxLength !== undefined) control.maxLength = property.maxLength;
      control.value = value ?? '';
      // An optional field left empty is left out, rather than sent as "" (which fails a format).
      if (!required && (properties ? original[name] : original) === undefined) control.dataset.omitEmpty = 'yes';
    } else {
      kind = 'json';
      control = document.createElement('textarea');
      control.value = JSON.stringify(value ?? null, null, 2);
    }
    control.required = required && kind !== 'boolean';
    control.dataset.field = name;
    control.dataset.kind = kind;
    control.addEventListener('input', onInput);
    control.addEventListener('change', onInput);
    label.append(caption, control);
    if (property.description) {
      const hint = document.createElement('span');
      hint.className = 'hint';
      hint.id = `field-hint-${++fieldIds}`;
      hint.textContent = property.description;
      control.setAttribute('aria-describedby', hint.id);
      label.append(hint);
    }
    fields.append(label);
  }
}

/** The form's value over `base` (fields left empty are removed); throws when a field is not valid. */
export function readFields(fields, base) {
  const controls = [...fields.querySelectorAll('[data-field]')];
  const read = (control) => {
    if (!control.checkValidity()) throw new Error(`${control.dataset.field}: ${control.validationMessage}`);
    switch (control.dataset.kind) {
      case 'boolean': return control.checked;
      case 'enum': return control.value === '' ? undefined : JSON.parse(control.value);
      case 'enums': {
        const chosen = [...control.selectedOptions].map((option) => JSON.parse(option.value));
        const { minItems, maxItems } = control.dataset;
        if (chosen.length === 0 && !control.required) return undefined;
        if (minItems !== '' && chosen.length < Number(minItems)) throw new Error(`${control.dataset.field}: choose at least ${minItems}`);
        if (maxItems !== '' && chosen.length > Number(maxItems)) throw new Error(`${control.dataset.field}: choose at most ${maxItems}`);
        return chosen;
      }
      case 'number': return control.value === '' ? undefined : Number(control.value);
      case 'json':
        try { return JSON.parse(control.value); } catch { throw new Error(`${control.dataset.field}: not valid JSON`); }
      default: return control.value === '' && control.dataset.omitEmpty ? undefined : control.value;
    }
  };
  if (controls.length === 1 && controls[0].dataset.field === '(input)') return read(controls[0]);
  const value = { ...(base ?? {}) };
  for (const control of controls) {
    const field = read(control);
    if (field === undefined) delete value[control.dataset.field];
    else value[control.dataset.field] = field;
  }
  return value;
}
