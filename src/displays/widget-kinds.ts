// The spec's WidgetKind values, and which of them the portal draws. A kind outside the
// list (a newer schema's, say) is kept in the document and drawn as a placeholder tile.
export const WIDGET_KINDS = [
  'trend', 'bullet', 'sparkline', 'value-tile', 'table', 'state-indicator', 'episode-gantt', 'xy', 'dot-bubble', 'bar',
  'box', 'strip', 'interval-summary', 'heatmap', 'treemap', 'multiline-text', 'picture', 'line', 'symbol',
] as const;
export type WidgetKind = (typeof WIDGET_KINDS)[number];

/** Kinds the portal has a renderer for (issue 30 item 7); the others show a placeholder. */
export const RENDERED_KINDS: ReadonlySet<string> = new Set([
  'trend', 'value-tile', 'sparkline', 'bullet', 'table', 'state-indicator', 'episode-gantt', 'xy', 'bar', 'heatmap',
]);

export const KNOWN_KINDS: ReadonlySet<string> = new Set(WIDGET_KINDS);

/** The newest display schema this service writes and reads ('MAJOR.MINOR'). */
export const DISPLAY_SCHEMA = { major: 1, minor: 0 } as const;
