// The stable lint codes of display documents: each with its severity and what it tells a
// display author. Codes are never renamed; a new check gets a new code.
export const LINT_SEVERITIES = ['error', 'warning', 'info'] as const;
export type LintSeverity = (typeof LINT_SEVERITIES)[number];

export const LINT_CODES = {
  'attribute-unresolved': { severity: 'error', meaning: 'A selector names an attribute that does not exist: an attribute id unknown to the model, or a template-relative name the display\'s template does not define.' },
  'selector-unresolved': { severity: 'warning', meaning: 'A selector was saved unresolved (kind `unresolved`); it carries the reason it could not be resolved.' },
  'scale-group-incompatible-units': { severity: 'error', meaning: 'Traces sharing a scale group measure different quantity kinds (degC and bar on one axis).' },
  'scale-group-unknown': { severity: 'warning', meaning: 'A trace names a scale group the document does not declare.' },
  'scale-group-inverted': { severity: 'error', meaning: 'An explicit scale group has min >= max.' },
  'time-invalid': { severity: 'error', meaning: 'A start or end is not a time expression this service reads.' },
  'time-window-empty': { severity: 'error', meaning: 'A window starts and ends at the same instant.' },
  'time-window-inverted': { severity: 'error', meaning: 'A window ends before it starts.' },
  'timezone-unknown': { severity: 'error', meaning: 'An explicit time zone is not an IANA zone name.' },
  'anchor-unresolvable': { severity: 'error', meaning: 'An anchored window\'s anchor cannot be resolved (unknown kind, missing episode, episodes not available); it draws no range until it can.' },
  'widget-kind-no-renderer': { severity: 'info', meaning: 'The portal has no renderer for this widget kind yet; it shows a placeholder tile.' },
  'widget-kind-unknown': { severity: 'warning', meaning: 'The widget kind is not one of this schema\'s WidgetKind values (a newer schema\'s?); it is kept and shown as a placeholder.' },
  'widget-id-duplicate': { severity: 'error', meaning: 'Two widgets share one id; links, priority order and layers cannot tell them apart.' },
  'widget-unbound': { severity: 'warning', meaning: 'A data widget (trend, value tile, ...) has no attribute to show.' },
  'layer-unknown': { severity: 'warning', meaning: 'A widget names a layer the document does not declare.' },
  'priority-order-unknown-widget': { severity: 'warning', meaning: 'priority_order names a widget id the document does not have.' },
  'template-unknown': { severity: 'warning', meaning: 'meta.template names no asset template of this model; template-relative selectors cannot be checked.' },
  'schema-version-newer': { severity: 'warning', meaning: 'service_display is newer than this service\'s display schema; unknown parts are kept but may not be understood.' },
  'unit-unknown': { severity: 'warning', meaning: 'A trace\'s unit_id or quantity_kind_id is not a registry entry of this model.' },
} as const satisfies Record<string, { severity: LintSeverity; meaning: string }>;

export type LintCode = keyof typeof LINT_CODES;

export interface LintFinding {
  widget_id: string | null;
  code: LintCode;
  message: string;
  severity: LintSeverity;
}

export function finding(code: LintCode, widgetId: string | null, message: string): LintFinding {
  return { widget_id: widgetId, code, message, severity: LINT_CODES[code].severity };
}
