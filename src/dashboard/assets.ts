// The dashboard's only style sheet and script, served from this process (no other origin, no build).
// The script adds copy buttons, reads picked CSV files into their forms, starts a time-zone picker on the
// browser's zone and moves the focus to a form's error; every page works without it.

/** Where each asset is served and what it holds. */
export const ASSETS = {
  '/dashboard/assets/dashboard.css': {
    type: 'text/css; charset=utf-8',
    body: `
:root { color-scheme: light; --ink: #1d2430; --muted: #4a5568; --line: #cbd5e0; --accent: #1f4fbf; --bad: #a61b1b; --good: #176b36; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f7f8fa; overflow-wrap: break-word; }
.skip { position: absolute; left: -10000px; top: 0.5rem; background: #fff; padding: 0.5rem 1rem; z-index: 3; }
.skip:focus { left: 1rem; }
strong, code, .mono, a, bdi { unicode-bidi: isolate; }
.control { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.8em; color: var(--muted); border: 1px solid var(--muted); border-radius: 3px; padding: 0 0.15em; margin: 0 0.1em; white-space: nowrap; unicode-bidi: isolate; }
a { color: var(--accent); }
header { background: #fff; border-bottom: 1px solid var(--line); padding: 0.5rem 1.5rem; display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; }
header nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 1rem; margin: 0; padding: 0; }
header nav a[aria-current="page"] { font-weight: 700; }
header .who { margin-left: auto; display: flex; gap: 0.75rem; align-items: center; color: var(--muted); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; background: #fff; }
.table-box { overflow-x: auto; max-width: 100%; }
th, td { text-align: left; padding: 0.4rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.9em; }
code, .mono, .long, dl.facts dd { overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.85em; }
form.inline { display: inline; }
label { display: block; font-weight: 600; margin-top: 0.75rem; }
input[type="text"], input[type="email"], input[type="password"], input[type="url"], select, textarea { font: inherit; padding: 0.35rem 0.5rem; border: 1px solid #718096; border-radius: 4px; min-width: 18rem; max-width: 100%; }
input[type="file"] { font: inherit; min-height: 2.25rem; }
textarea { width: 100%; min-height: 8rem; }
fieldset { border: 1px solid var(--line); margin-top: 0.75rem; }
fieldset label, label.inline { display: inline-block; font-weight: 400; margin-right: 1rem; }
button, .button { font: inherit; padding: 0.35rem 0.9rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; display: inline-block; margin-top: 0.5rem; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger, .button.danger { background: var(--bad); border-color: var(--bad); color: #fff; }
:focus-visible { outline: 3px solid #1a365d; outline-offset: 2px; }
.notice { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--accent); padding: 0.75rem 1rem; margin: 1rem 0; }
.error { border-left-color: var(--bad); }
.secret { background: #fffbea; border-left-color: #b7791f; }
.state-bad { color: var(--bad); font-weight: 600; }
.state-good { color: var(--good); font-weight: 600; }
.muted { color: var(--muted); }
.pager { display: flex; gap: 1rem; margin-top: 1rem; }
.when { white-space: nowrap; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; min-width: 0; }
[hidden] { display: none !important; }
.test-banner { position: sticky; top: 0; z-index: 2; background: #7b341e; color: #fff; padding: 0.4rem 1.5rem; border-bottom: 3px solid #f6ad55; }
.test-banner p { margin: 0; }
html.test-mode { scroll-padding-top: 4rem; }
@media (max-width: 40rem) { .test-banner { position: static; } html.test-mode { scroll-padding-top: 0; } }
button.mode-switch { background: #fff; color: var(--ink); border-color: #718096; }
button.mode-switch[aria-pressed="true"] { background: #7b341e; border-color: #7b341e; color: #fff; }
.field-error { color: var(--bad); font-weight: 600; margin: 0.25rem 0; }
[aria-invalid="true"] { border-color: var(--bad); border-width: 2px; }
progress { vertical-align: middle; margin-right: 0.5rem; }
.mode-state { display: inline-block; margin-left: 0.35rem; padding: 0 0.4rem; border-radius: 999px; border: 1px solid currentColor; font-size: 0.85em; text-transform: uppercase; }
`,
  },
  '/dashboard/assets/dashboard.js': {
    type: 'text/javascript; charset=utf-8',
    body: `'use strict';
// Copy buttons: a button with data-copy names the element whose text it copies.
document.querySelectorAll('button[data-copy]').forEach(function (button) {
  var source = document.getElementById(button.getAttribute('data-copy'));
  if (!source || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener('click', function () {
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = 'Copied';
    });
  });
});
// A CSV file picked (contacts import, campaign contacts) is read into its text field, so the form needs no multipart body.
document.querySelectorAll('input[type="file"][data-into]').forEach(function (input) {
  var target = document.getElementById(input.getAttribute('data-into'));
  if (!target) return;
  input.closest('[hidden]') && (input.closest('[hidden]').hidden = false);
  input.addEventListener('change', function () {
    var file = input.files && input.files[0];
    if (file) file.text().then(function (text) {
      target.value = text;
      target.dispatchEvent(new Event('input'));
    });
  });
});
// A field with data-selects checks the radio button it names once something is typed or read into it.
document.querySelectorAll('[data-selects]').forEach(function (field) {
  var radio = document.getElementById(field.getAttribute('data-selects'));
  if (!radio) return;
  field.addEventListener('input', function () {
    if (field.value.trim() !== '') radio.checked = true;
  });
});
// A time-zone picker shown fresh starts on the browser's own zone, when the picker lists it.
document.querySelectorAll('select[data-local-zone]').forEach(function (select) {
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  for (var i = 0; i < select.options.length; i += 1) if (select.options[i].value === zone) select.value = zone;
});
// A page that answers a form with an error takes the focus to it, so it is read before anything else.
var problem = document.querySelector('.notice.error');
if (problem) {
  problem.setAttribute('tabindex', '-1');
  problem.focus();
}
`,
  },
} as const;
