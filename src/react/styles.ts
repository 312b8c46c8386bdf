/**
 * The dashboard's own styles: one stylesheet, every rule under `.wpd` so that it neither takes nor
 * gives styles to the app around it; colours as custom properties, with a dark set when the
 * viewer's system prefers it (or `data-theme="dark"` on the dashboard). No CSS framework, no fonts
 * or images loaded from anywhere.
 */
export const DASHBOARD_CSS = `
.wpd{--bg:#fff;--fg:#1c2024;--muted:#60646c;--line:#d9d9e0;--card:#f9f9fb;--accent:#0d74ce;
--ok:#218358;--bad:#ce2c31;--warn:#ab6400;--gone:#8b8d98;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);
padding:16px;border-radius:8px;max-width:1100px}
@media (prefers-color-scheme:dark){.wpd:not([data-theme=light]){--bg:#111113;--fg:#edeef0;--muted:#b0b4ba;
--line:#363a3f;--card:#18191b;--accent:#70b8ff;--ok:#3dd68c;--bad:#ff9592;--warn:#ffca16;--gone:#777b84}}
.wpd[data-theme=dark]{--bg:#111113;--fg:#edeef0;--muted:#b0b4ba;--line:#363a3f;--card:#18191b;
--accent:#70b8ff;--ok:#3dd68c;--bad:#ff9592;--warn:#ffca16;--gone:#777b84}
.wpd *{box-sizing:border-box}
.wpd h2{font-size:18px;margin:0 0 4px}
.wpd h3{font-size:14px;margin:20px 0 8px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.wpd .wpd-sub{color:var(--muted);margin:0 0 12px}
.wpd .wpd-cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(120px,1fr));gap:8px}
.wpd .wpd-card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px 10px}
.wpd .wpd-card b{display:block;font-size:20px;font-variant-numeric:tabular-nums}
.wpd .wpd-card span{color:var(--muted);font-size:12px}
.wpd .wpd-ok{color:var(--ok)}.wpd .wpd-bad{color:var(--bad)}.wpd .wpd-warn{color:var(--warn)}
.wpd table{width:100%;border-collapse:collapse;font-variant-numeric:tabular-nums}
.wpd th,.wpd td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
.wpd th{font-weight:600;color:var(--muted);font-size:12px}
.wpd td.wpd-err{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;color:var(--bad);
max-width:420px;overflow-wrap:anywhere}
.wpd button{font:inherit;font-size:13px;padding:3px 10px;border-radius:5px;border:1px solid var(--line);
background:var(--card);color:var(--fg);cursor:pointer}
.wpd button:hover:not(:disabled){border-color:var(--accent);color:var(--accent)}
.wpd button:disabled{opacity:.5;cursor:default}
.wpd input{font:inherit;width:72px;padding:2px 6px;border-radius:5px;border:1px solid var(--line);
background:var(--bg);color:var(--fg)}
.wpd .wpd-bar{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:8px 0}
.wpd .wpd-note{color:var(--muted);font-size:12px;margin:4px 0}
.wpd .wpd-msg{padding:8px 12px;border-radius:6px;border:1px solid var(--bad);color:var(--bad);margin:8px 0}
.wpd .wpd-chart{width:100%;height:auto;display:block}
.wpd .wpd-legend{display:flex;gap:14px;font-size:12px;color:var(--muted)}
.wpd .wpd-swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
`;
