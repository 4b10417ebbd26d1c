/**
 * The dashboard's stylesheet: the report's (`REPORT_STYLE`), so the two pages look like
 * siblings, plus what a live page needs: status badges, cards that wrap on a phone, buttons.
 */
import { REPORT_STYLE } from '../../replay/report/style.ts';

const DASHBOARD_ADDITIONS = `
body { margin: 16px auto; padding: 0 12px; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 16px; }
header h1 { margin: 0; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 10px; font-weight: 600; color: #fff; }
.badge.ACTIVE { background: #2e7d32; } .badge.REDUCING { background: #f0a020; } .badge.HALTED { background: #c62828; }
.badge.unknown { background: #777; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 8px 16px; margin-top: 12px; align-items: start; }
.card { border: 1px solid #e5e5e5; border-radius: 6px; padding: 8px 12px; }
.card .label { color: #555; font-size: 12px; } .card .value { font-size: 16px; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; }
.controls { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 12px; }
.controls button { font: inherit; padding: 6px 14px; border-radius: 4px; border: 1px solid #999; background: #f7f7f7; cursor: pointer; }
.controls button.danger { border-color: #c62828; color: #c62828; }
.controls .result { align-self: center; color: #555; }
.notice.error { background: #fdecea; border-left-color: #c62828; }
.live { color: #2e7d32; font-size: 12px; } .live.stale { color: #c62828; } .live.polling { color: #ef6c00; }
pre.params { margin: 0; font-size: 12px; white-space: pre-wrap; text-align: left; }
@media (max-width: 600px) { body { margin: 8px auto; } th, td { padding: 3px 6px; } .chart { height: 220px; } }
`;

export const DASHBOARD_STYLE = `${REPORT_STYLE}${DASHBOARD_ADDITIONS}`;
