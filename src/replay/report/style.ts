/**
 * The one stylesheet of paperbot's HTML pages (the backtest report, the sweep comparison, and
 * any page that should look like their sibling): plain system fonts, tabular numbers, charts
 * the width of the page.
 */
export const REPORT_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1a1a1a; max-width: 1200px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; } h3 { font-size: 14px; margin: 18px 0 6px; }
table { border-collapse: collapse; } th, td { padding: 3px 10px; border-bottom: 1px solid #e5e5e5; }
th { text-align: left; font-weight: 600; } td { font-variant-numeric: tabular-nums; text-align: right; }
td.text { text-align: left; }
.summary th { cursor: help; } .none { color: #999; }
tr.loss td.pnl { color: #c62828; } tr.win td.pnl { color: #2e7d32; }
.chart { height: 320px; width: 100%; } .chart.small { height: 200px; }
.meta { color: #555; } .notice { background: #fff4e5; border-left: 4px solid #f0a020; padding: 8px 12px; }
.legend { color: #555; font-size: 12px; } .legend span { margin-right: 14px; }
table.sortable th { cursor: pointer; user-select: none; } table.sortable th[aria-sort]::after { content: " ↕"; color: #999; }
table.sortable th[aria-sort="ascending"]::after { content: " ↑"; color: #333; }
table.sortable th[aria-sort="descending"]::after { content: " ↓"; color: #333; }
svg.spark { display: block; }
`;
