/* The sendat console: every figure comes from /v1 with the token typed at login, kept in
 * sessionStorage (never in a URL). Views are sections switched by the URL's #fragment. */
'use strict';

const $ = (id) => document.getElementById(id);
const VIEWS = ['login', 'load', 'task', 'dead', 'delivery', 'fleet', 'bookings', 'tasks', 'group',
               'series'];

function token() { return sessionStorage.getItem('sendat-token'); }

/* The token's role, as GET /v1/whoami said at login: buttons the role may not use are not
 * shown (the API refuses them all the same). */
const RANK = { reader: 1, producer: 2, admin: 3 };
function may(role) { return (RANK[sessionStorage.getItem('sendat-role')] || 0) >= RANK[role]; }

async function api(method, path) {
  const resp = await fetch('/v1' + path, {
    method, headers: { Authorization: 'Bearer ' + token() }, cache: 'no-store',
  });
  let body = null;
  try { body = await resp.json(); } catch (e) { body = null; }
  if (resp.status === 401) { logout('The token was refused; log in again.'); }
  return { status: resp.status, body };
}

function say(id, text, bad) {
  $(id).textContent = text;
  $(id).classList.toggle('bad', !!bad);
}

function errorText(res) {
  if (res.status === 403) return 'forbidden: your token\'s role may not do this';
  const e = res.body && res.body.error;
  return e ? e.message + ' (' + res.status + ')' : 'HTTP ' + res.status;
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function show(view) {
  if (!token()) view = 'login';
  else if (!VIEWS.includes(view) || view === 'login') view = 'load';
  for (const v of VIEWS) $('view-' + v).hidden = v !== view;
  $('nav').hidden = !token();
  for (const a of document.querySelectorAll('nav a'))
    a.toggleAttribute('aria-current', a.getAttribute('href') === '#' + view);
  if (a11yFocus[view]) $(a11yFocus[view]).focus();
  if (loaders[view]) loaders[view]();
  clearInterval(refresher); /* the live views are read again every 5 s while shown */
  refresher = LIVE.includes(view) ? setInterval(() => { if (token()) loaders[view](); }, 5000) : null;
}
const LIVE = ['load', 'delivery', 'fleet'];
let refresher = null;
const a11yFocus = { login: 'token', task: 'task-id', group: 'group-name', tasks: 'tasks-from' };

/* What a view showed goes with the token: nothing of it stays on the page after a logout. */
const DATA = ['chart', 'load-summary', 'timeline', 'members-of-group', 'dead-list', 'dead-detail',
              'delivery-summary', 'minutes', 'hist-dispatch', 'hist-delivery', 'fleet-list',
              'series-list', 'series-ahead', 'ahead-title', 'groups-list', 'group-title',
              'group-figures', 'group-preview', 'group-members', 'tasks-list'];

function logout(why) {
  sessionStorage.removeItem('sendat-token');
  sessionStorage.removeItem('sendat-role');
  for (const id of DATA) $(id).replaceChildren();
  for (const id of ['dead-detail', 'task-actions', 'ahead-title', 'group-page']) $(id).hidden = true;
  for (const m of document.querySelectorAll('.msg:not(#login-msg)')) m.textContent = '';
  say('login-msg', why || '', !!why);
  location.hash = '#login';
  show('login');
}

async function login(ev) {
  ev.preventDefault();
  sessionStorage.setItem('sendat-token', $('token').value.trim());
  $('token').value = '';
  const res = await api('GET', '/whoami');
  if (res.status !== 200) {
    if (res.status !== 401) logout('Login failed: ' + errorText(res));
    return;
  }
  sessionStorage.setItem('sendat-role', res.body.role);
  say('login-msg', '');
  location.hash = '#load';
  show('load');
}

/* Every time the console shows is UTC in one form: 2026-11-22 09:30:00Z, or 09:30Z where the
 * day goes without saying (the load chart's next 24 h, the last hour's minutes). t is an
 * RFC 3339 string or milliseconds; '-' for none. */
function showTime(t, clockOnly) {
  if (t === undefined || t === null || t === '') return '-';
  const d = new Date(t);
  if (isNaN(d)) return String(t);
  const iso = d.toISOString();
  return clockOnly ? iso.slice(11, 16) + 'Z' : iso.slice(0, 10) + ' ' + iso.slice(11, 19) + 'Z';
}

/* What the fleet can send per second, for the capacity warnings (issue 34 item 4): its busiest
 * minute of the last hour, from the members' beats, but at least CAPACITY_FLOOR a member alive.
 * What it happened to send lately is no measure: a quiet fleet (7/min after a restart) flagged
 * nearly every slot. The floor is far below what one member sends to a quick receiver
 * (docs/performance.md: thousands a second), so a warning means a level is big, not that the
 * fleet was idle. */
const CAPACITY_FLOOR = 50;
/* A level with fewer tasks is never flagged: a handful of tasks is no capacity question. */
const CAPACITY_MIN_TASKS = 100;

function fleetCapacity(stats) {
  const minutes = (stats.delivery || {}).minutes || [];
  const measured = Math.max(0, ...minutes.map((m) => m.sent)) / 60;
  const alive = (stats.members || []).filter((m) => m.beat_age_ms <= 3000).length;
  return { rate: Math.max(measured, CAPACITY_FLOOR * Math.max(1, alive)), measured };
}

function rateText(rate) {
  return rate >= 1 ? rate.toFixed(1) + '/s' : Math.round(rate * 60) + '/min';
}

/* A level's capacity warning: the time the fleet needs for its tasks at its capacity, against
 * one slot (a window's tasks may be spread over it: "if due together"); none below
 * CAPACITY_MIN_TASKS tasks. */
function capacityNote(l, cap, slotS) {
  if (l.tasks < CAPACITY_MIN_TASKS) return null;
  const need = l.tasks / cap.rate;
  if (need <= slotS) return null;
  return (l.level === 'slot' ? '' : 'if due together: ') + 'needs ~' + Math.ceil(need) +
    ' s at the fleet\'s capacity (' + rateText(cap.rate) + '), longer than a slot (' + slotS + ' s)';
}

function loadBar(l, max, note) {
  const row = el('div', undefined, 'bar-row' + (note ? ' warn' : ''));
  row.setAttribute('role', 'listitem');
  row.append(el('span', l.later ? 'later' : showTime(l.start, true) + ' ' + l.level));
  const bar = el('div', undefined, 'bar ' + (l.later ? 'window' : l.level));
  bar.style.width = (100 * l.tasks / max) + '%';
  bar.title = (l.later ? 'after 24 h' : showTime(l.start)) + ': ' + plural(l.tasks, 'task') +
    (l.cancelled ? ' (' + l.cancelled + ' cancelled left out)' : '');
  row.append(bar, el('span', String(l.tasks), 'num'));
  if (note) row.append(el('span', '\u26a0 ' + note, 'note'));
  return row;
}

/* Upcoming load: tasks per level start over the next 24 h, one bar each, later ones in one
 * bar; a level the fleet cannot send within a slot at its capacity (fleetCapacity) is marked. Cancelled
 * tasks (still in the stream until due) are left out of the bars and the warnings, and a level
 * they alone fill is not drawn. */
async function loadLoad() {
  const res = await api('GET', '/stats');
  const chart = $('chart');
  chart.replaceChildren();
  if (res.status !== 200) return say('load-msg', errorText(res), true);
  const end = Date.now() + 24 * 3600 * 1000, all = (res.body.levels || []).filter((l) => l.tasks > 0);
  const levels = all.filter((l) => Date.parse(l.start) < end);
  const later = all.filter((l) => Date.parse(l.start) >= end);
  const rows = levels.concat(later.length ? [{ later: true, tasks: later.reduce((a, l) => a + l.tasks, 0),
                                               cancelled: later.reduce((a, l) => a + (l.cancelled || 0), 0) }] : []);
  const max = Math.max(1, ...rows.map((l) => l.tasks));
  const cap = fleetCapacity(res.body), slotS = ((res.body.layout || {}).slot_ms || 10000) / 1000;
  let total = 0, warned = 0;
  for (const l of rows) {
    const note = l.later ? null : capacityNote(l, cap, slotS);
    if (!l.later) total += l.tasks;
    warned += !!note;
    chart.append(loadBar(l, max, note));
  }
  $('load-summary').textContent = plural(total, 'task') + ' in ' + plural(levels.length, 'level') +
    ' starting within 24 h' + (later.length ? ', ' + rows[rows.length - 1].tasks +
    ' later in ' + plural(later.length, 'level') : '') + '; ' + plural(res.body.tasks || 0, 'task') +
    ' in the stream in all' + (res.body.cancelled ? ', ' + res.body.cancelled +
    ' of them cancelled (left out above: they wait until due, never to be sent)' : '') + '. ' +
    'Capacity: ' + rateText(cap.rate) + (cap.rate > cap.measured ? ' (at least ' + CAPACITY_FLOOR +
    '/s a member alive; the busiest minute of the last hour sent ' + rateText(cap.measured) + ')'
    : ' (the busiest minute of the last hour)') + '; levels of ' + CAPACITY_MIN_TASKS +
    ' tasks or more are checked' +
    (warned ? '; ' + warned + (warned === 1 ? ' level needs' : ' levels need') + ' longer than a slot.' : '.');
  say('load-msg', levels.length ? '' : 'Nothing is due in the next 24 h.');
}

/* Recent delivery: the last hour per minute (minutes with any activity, and the current one)
 * and both lateness distributions, from the members' beats. */
async function loadDelivery() {
  const res = await api('GET', '/stats');
  if (res.status !== 200) return say('delivery-msg', errorText(res), true);
  const d = res.body.delivery || { minutes: [], bounds_ms: [], dispatch: [], delivery: [] };
  const tbody = $('minutes');
  tbody.replaceChildren();
  const sum = { sent: 0, retried: 0, dead: 0 };
  d.minutes.forEach((m, i) => {
    for (const k of Object.keys(sum)) sum[k] += m[k];
    if (i > 0 && !m.sent && !m.retried && !m.dead) return;
    const tr = el('tr');
    tr.append(el('td', showTime(m.minute, true)), el('td', String(m.sent), 'num'),
              el('td', String(m.retried), 'num'), el('td', String(m.dead), 'num'));
    tbody.append(tr);
  });
  $('delivery-summary').textContent = 'The last hour: ' + sum.sent + ' sent, ' + sum.retried +
    ' retried, ' + sum.dead + ' dead-lettered, by the members alive now (one that stopped ' +
    'takes its counts with it).';
  histogram($('hist-dispatch'), d.bounds_ms, d.dispatch);
  histogram($('hist-delivery'), d.bounds_ms, d.delivery);
  say('delivery-msg', '');
}

function histogram(chart, bounds, counts) {
  chart.replaceChildren();
  const max = Math.max(1, ...counts);
  const label = (ms) => ms >= 1000 ? ms / 1000 + ' s' : ms + ' ms';
  counts.forEach((n, i) => {
    const row = el('div', undefined, 'bar-row');
    row.setAttribute('role', 'listitem');
    row.append(el('span', i < bounds.length ? '\u2264 ' + label(bounds[i]) : '> ' + label(bounds[bounds.length - 1])));
    const bar = el('div', undefined, 'bar');
    bar.style.width = (100 * n / max) + '%';
    row.append(bar, el('span', String(n), 'num'));
    chart.append(row);
  });
}

/* One task: its timeline and a cancel with a confirm step. */
let shownTask = null;

function eventText(e) {
  const rest = Object.entries(e).filter(([k]) => !['at', 'at_ms', 'event'].includes(k))
    .map(([k, v]) => k + '=' + (typeof v === 'object' ? JSON.stringify(v) : v));
  return showTime(e.at) + '  ' + e.event + (rest.length ? '  ' + rest.join(' ') : '');
}

async function lookUp(ev) {
  if (ev) ev.preventDefault();
  const id = $('task-id').value.trim();
  $('timeline').replaceChildren();
  $('task-actions').hidden = true;
  $('cancel-confirm').hidden = true;
  shownTask = null;
  const res = await api('GET', '/tasks/' + encodeURIComponent(id));
  if (res.status !== 200) return say('task-msg', res.status === 404 ? 'unknown task ' + id :
                                                   errorText(res), true);
  for (const e of res.body.events) $('timeline').append(el('li', eventText(e)));
  shownTask = id;
  $('task-actions').hidden = !may('producer');
  say('task-msg', '');
}

/* Up to want tasks of GET /v1/tasks?query, after cursor: a page reads a bounded part of the
 * range (512 windows) and may end short of the range with a cursor, so pages are asked for
 * until want are in hand or the range ends (at most 50 requests). */
async function taskPages(query, cursor, want) {
  const tasks = [];
  let res = null;
  for (let asked = 0; asked < 50; asked++) {
    res = await api('GET', '/tasks?' + query + '&limit=' + (want - tasks.length) +
                    (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
    if (res.status !== 200) return { res, tasks, next: null };
    tasks.push(...res.body.tasks);
    cursor = res.body.next_cursor;
    if (!cursor || tasks.length >= want) break;
  }
  return { res, tasks, next: cursor };
}

/* A group's tasks due in the next 24 h (the range is walked window by window), each a link
 * to its timeline. */
async function listGroup(ev) {
  ev.preventDefault();
  const name = $('member-group').value.trim(), list = $('members-of-group');
  list.replaceChildren();
  const from = new Date().toISOString(), to = new Date(Date.now() + 86400e3).toISOString();
  const got = await taskPages('group=' + encodeURIComponent(name) + '&from=' +
                              encodeURIComponent(from) + '&to=' + encodeURIComponent(to), null, 200);
  if (got.res.status !== 200) return say('task-msg', errorText(got.res), true);
  for (const t of got.tasks) {
    const b = el('button', t.id + '  due ' + showTime(t.due));
    b.type = 'button';
    b.dataset.id = t.id;
    b.dataset.action = 'timeline';
    b.addEventListener('click', () => { $('task-id').value = t.id; lookUp(); });
    const li = el('li');
    li.append(b);
    list.append(li);
  }
  say('task-msg', got.tasks.length + ' due within 24 h in group ' + name +
      (got.next ? ' (the first 200 shown)' : ''));
}

async function cancelTask() {
  $('cancel-confirm').hidden = true;
  const id = shownTask;
  const res = await api('DELETE', '/tasks/' + encodeURIComponent(id));
  if (res.status === 200) say('task-msg', id + ': cancelled');
  else if (res.status === 409) {
    const b = res.body, at = b.sent_at || b.sending_since || b.finished_at;
    say('task-msg', id + ': too late at ' + showTime(at), true);
  } else if (res.status === 404) say('task-msg', id + ': unknown', true);
  else say('task-msg', errorText(res), true);
  const msg = $('task-msg').textContent;
  await lookUp();
  say('task-msg', msg, res.status !== 200);
}

/* Dead letters: a list, each with replay and purge after a confirmation. */
async function loadDead() {
  const res = await api('GET', '/dead-letters?limit=200');
  const list = $('dead-list');
  list.replaceChildren();
  $('dead-detail').hidden = true;
  if (res.status !== 200) return say('dead-msg', errorText(res), true);
  for (const d of res.body.dead_letters) {
    const tr = el('tr');
    tr.append(el('td', d.id), el('td', showTime(d.failed)), el('td', String(d.attempts)),
              el('td', d.reason));
    const td = el('td');
    const show = el('button', 'Show');
    show.type = 'button';
    show.dataset.id = d.id;
    show.dataset.action = 'show';
    show.addEventListener('click', () => showDead(d.id));
    td.append(show);
    if (may('admin'))
      td.append(confirmButton('Replay', d.id, 'POST', '/replay', 'replayed'),
                confirmButton('Purge', d.id, 'DELETE', '', 'purged'));
    tr.append(td);
    list.append(tr);
  }
  if (!res.body.dead_letters.length) say('dead-msg', 'No dead letters.');
}

/* A dead letter in full: its attempts, and to admin its content (the API leaves it out else). */
async function showDead(id) {
  const res = await api('GET', '/dead-letters/' + encodeURIComponent(id));
  if (res.status !== 200) return say('dead-msg', id + ': ' + errorText(res), true);
  $('dead-detail').textContent = JSON.stringify(res.body, null, 2);
  $('dead-detail').hidden = false;
}

function confirmButton(label, id, method, suffix, done) {
  const b = el('button', label);
  b.type = 'button';
  b.dataset.id = id;
  b.dataset.action = label.toLowerCase();
  b.addEventListener('click', async () => {
    if (b.dataset.armed !== '1') {
      b.dataset.armed = '1';
      b.textContent = 'Really ' + label.toLowerCase() + '?';
      return;
    }
    const res = await api(method, '/dead-letters/' + encodeURIComponent(id) + suffix);
    await loadDead();
    if (res.status === 200) say('dead-msg', id + ': ' + done);
    else say('dead-msg', id + ': ' + (res.status === 404 ? 'unknown' : errorText(res)), true);
  });
  b.addEventListener('blur', () => { b.dataset.armed = ''; b.textContent = label; });
  return b;
}

/* Fleet: the members with an entry in the bucket, their last beat (one silent for over 3 s is
 * dead or hung: a member beats every second) and what each holds, has in flight and sent. */
async function loadFleet() {
  const res = await api('GET', '/stats');
  const list = $('fleet-list');
  list.replaceChildren();
  if (res.status !== 200) return say('fleet-msg', errorText(res), true);
  const members = res.body.members || [];
  let silent = 0;
  for (const m of members) {
    const tr = el('tr'), quiet = m.beat_age_ms > 3000;
    silent += quiet;
    const count = (v) => el('td', v === undefined ? '-' : String(v), 'num');
    tr.append(el('td', m.name), el('td', m.instance),
              el('td', (m.beat_age_ms / 1000).toFixed(1) + ' s ago' + (quiet ? ' (silent)' : ''),
                 quiet ? 'bad' : undefined),
              count(m.held), count(m.in_flight), count(m.sent));
    list.append(tr);
  }
  const alive = members.length - silent;
  say('fleet-msg', alive + (alive === 1 ? ' member' : ' members') + ' alive' +
      (silent ? ', ' + silent + ' silent (dead or hung)' : '') + mailNote(res.body.mail),
      silent > 0 || !!(res.body.mail && res.body.mail.waits));
}

/* Who of the members alive can send mail (`sendat stats`'s "mail"): said only when one
 * cannot, as a member without SENDAT_SMTP_URL leaves email tasks to the others. */
function mailNote(mail) {
  if (!mail || !mail.cannot_send) return '';
  if (mail.waits) return '; no member alive can send mail (none has SENDAT_SMTP_URL): email tasks wait until one does';
  return '; ' + mail.can_send + ' of ' + (mail.can_send + mail.cannot_send) +
    ' can send mail, the others leave email tasks to them';
}

/* Bookings: every group, newest booking first, with its tasks counted by state; a group's
 * page lists its tasks and offers a cancel that says first what it will do. Pages go on with
 * More (the API's next_cursor). */
let groupsCursor = null, shownGroup = null, membersCursor = null;


async function loadBookings(more) {
  const list = $('groups-list');
  if (!more) { list.replaceChildren(); groupsCursor = null; }
  const res = await api('GET', '/groups?limit=50' + (groupsCursor ? '&cursor=' + encodeURIComponent(groupsCursor) : ''));
  if (res.status !== 200) return say('bookings-msg', errorText(res), true);
  for (const g of res.body.groups) {
    const tr = el('tr'), td = el('td'), b = el('button', g.group, 'name');
    b.type = 'button';
    b.dataset.group = g.group;
    b.dataset.action = 'group';
    b.addEventListener('click', () => showGroup(g.group));
    td.append(b);
    tr.append(td, el('td', showTime(g.booked)));
    for (const k of ['waiting', 'sent', 'failed', 'dead', 'cancelled']) tr.append(el('td', String(g[k]), 'num'));
    tr.append(el('td', showTime(g.first_due)), el('td', showTime(g.last_due)), el('td', showTime(g.next_send)));
    list.append(tr);
  }
  groupsCursor = res.body.next_cursor;
  $('groups-more').hidden = !groupsCursor;
  const shown = list.children.length;
  say('bookings-msg', shown ? plural(shown, 'group') + ' shown' + (groupsCursor ? '; more with More groups' : '') :
    'No groups: book tasks with "group" to see them here.');
}

/* "3 waiting will be cancelled; 1 already sent": what DELETE /v1/groups/{name} would do, from
 * the group's figures (a group cancel takes waiting, failed and dead tasks). */
function previewText(g) {
  const will = ['waiting', 'failed', 'dead'].filter((k) => g[k]).map((k) => g[k] + ' ' + k);
  const parts = [will.length ? will.join(', ').replace(/, ([^,]*)$/, ' and $1') + ' will be cancelled' :
                 'nothing left to cancel'];
  if (g.cancel.already_cancelled) parts.push(g.cancel.already_cancelled + ' already cancelled');
  if (g.cancel.already_sent) parts.push(g.cancel.already_sent + ' already sent');
  return parts.join('; ');
}

async function showGroup(name, more) {
  if (!more) { shownGroup = name; membersCursor = null; $('group-members').replaceChildren(); }
  $('group-page-confirm').hidden = true;
  const res = await api('GET', '/groups/' + encodeURIComponent(name) + '?limit=100' +
                        (more && membersCursor ? '&cursor=' + encodeURIComponent(membersCursor) : ''));
  if (res.status !== 200) return say('group-page-msg', errorText(res), true);
  const g = res.body;
  $('group-page').hidden = false;
  $('group-title').textContent = 'Group ' + g.group;
  $('group-figures').textContent = plural(g.tasks, 'task') + ': ' + g.waiting + ' waiting, ' + g.sent +
    ' sent, ' + g.failed + ' failed, ' + g.dead + ' dead, ' + g.cancelled + ' cancelled; due ' +
    showTime(g.first_due) + ' to ' + showTime(g.last_due) + '; next send ' + showTime(g.next_send);
  $('group-preview').textContent = 'Cancel: ' + previewText(g) + '.';
  $('group-page-actions').hidden = !may('producer') || !g.cancel.will_cancel;
  for (const t of g.members) { /* each id opens its timeline, as in the Tasks view */
    const tr = el('tr'), td = el('td'), b = el('button', t.id);
    b.type = 'button';
    b.dataset.id = t.id;
    b.dataset.action = 'timeline';
    b.addEventListener('click', () => { $('task-id').value = t.id; location.hash = '#task'; lookUp(); });
    td.append(b);
    tr.append(td, el('td', showTime(t.due)), el('td', t.state));
    $('group-members').append(tr);
  }
  membersCursor = g.next_cursor;
  $('members-more').hidden = !membersCursor;
  if (!more) say('group-page-msg', '');
}

async function cancelShownGroup() {
  $('group-page-confirm').hidden = true;
  const name = shownGroup;
  const res = await api('DELETE', '/groups/' + encodeURIComponent(name));
  if (res.status !== 200) return say('group-page-msg', errorText(res), true);
  const msg = name + ': ' + res.body.cancelled + ' cancelled, ' + res.body.too_late + ' too late';
  await showGroup(name);
  await loadBookings();
  say('group-page-msg', msg);
}

function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }

/* Tasks due in a range (GET /v1/tasks), filtered by group, host and state, a page at a time;
 * each id opens its timeline. */
let tasksQuery = null, tasksCursor = null;

async function listTasks(ev, more) {
  if (ev) ev.preventDefault();
  if (!more) {
    const q = new URLSearchParams({ from: $('tasks-from').value.trim(), to: $('tasks-to').value.trim() });
    for (const k of ['group', 'host', 'state']) if ($('tasks-' + k).value.trim()) q.set(k, $('tasks-' + k).value.trim());
    tasksQuery = q.toString();
    tasksCursor = null;
    $('tasks-list').replaceChildren();
    say('tasks-msg', 'Listing\u2026');
  }
  const got = await taskPages(tasksQuery, tasksCursor, 100);
  if (got.res.status !== 200) return say('tasks-msg', errorText(got.res), true);
  for (const t of got.tasks) {
    const tr = el('tr'), td = el('td'), b = el('button', t.id);
    b.type = 'button';
    b.dataset.id = t.id;
    b.dataset.action = 'timeline';
    b.addEventListener('click', () => { $('task-id').value = t.id; location.hash = '#task'; lookUp(); });
    td.append(b);
    tr.append(td, el('td', showTime(t.due)), el('td', t.level), el('td', t.channel), el('td', t.host || '-'),
              el('td', t.group || '-'), el('td', t.state));
    $('tasks-list').append(tr);
  }
  tasksCursor = got.next;
  $('tasks-more').hidden = !tasksCursor;
  say('tasks-msg', plural($('tasks-list').children.length, 'task') + ' shown' + (tasksCursor ? '; more with More tasks' : ''));
}

/* Group cancel, after a confirmation. */
function askGroup(ev) {
  ev.preventDefault();
  $('group-confirm').hidden = false;
  $('group-yes').focus();
}

async function cancelGroup() {
  $('group-confirm').hidden = true;
  const name = $('group-name').value.trim();
  const res = await api('DELETE', '/groups/' + encodeURIComponent(name));
  if (res.status !== 200) return say('group-msg', errorText(res), true);
  say('group-msg', name + ': ' + res.body.cancelled + ' cancelled, ' + res.body.too_late +
      ' too late');
}

/* Series: a list, each active one with Pause, each paused one with Resume. */
async function loadSeries() {
  const res = await api('GET', '/series');
  const list = $('series-list');
  list.replaceChildren();
  if (res.status !== 200) return say('series-msg', errorText(res), true);
  for (const x of res.body.series) {
    const tr = el('tr'), td = el('td');
    tr.append(el('td', x.id), el('td', x.state));
    if (x.state === 'active' || x.state === 'paused') td.append(aheadButton(x.id));
    const verb = x.state === 'active' ? 'pause' : x.state === 'paused' ? 'resume' : null;
    if (verb && may('producer')) {
      const b = el('button', verb[0].toUpperCase() + verb.slice(1));
      b.type = 'button';
      b.dataset.id = x.id;
      b.dataset.action = verb;
      b.addEventListener('click', () => pauseSeries(x.id, verb));
      td.append(b, seriesCancelButton(x.id));
    }
    tr.append(td);
    list.append(tr);
  }
  if (!res.body.series.length) say('series-msg', 'No series.');
}

function aheadButton(id) {
  const b = el('button', 'Ahead');
  b.type = 'button';
  b.dataset.id = id;
  b.dataset.action = 'ahead';
  b.addEventListener('click', () => showAhead(id));
  return b;
}

/* A series' next occurrences in its zone and in UTC, with `sendat preview`'s DST warnings. */
async function showAhead(id) {
  const res = await api('GET', '/series/' + encodeURIComponent(id) + '/ahead?n=5');
  const list = $('series-ahead');
  list.replaceChildren();
  if (res.status !== 200) return say('series-msg', id + ': ' + errorText(res), true);
  $('ahead-title').textContent = 'Next occurrences of ' + id;
  $('ahead-title').hidden = false;
  const warn = { gap: 'DST gap: this local time does not exist that day; fires once at the first valid instant after it',
                 overlap: 'DST overlap: this local time happens twice that day; fires once, at the first' };
  for (const o of res.body.ahead) {
    const li = el('li', o.local + '  (' + showTime(o.at) + ')');
    if (o.dst) li.append(el('div', 'warning: ' + warn[o.dst], 'bad'));
    list.append(li);
  }
  if (!res.body.ahead.length) list.append(el('li', 'none ahead'));
}

/* Cancel a series: a second click confirms (leaving the button disarms it). */
function seriesCancelButton(id) {
  const b = el('button', 'Cancel');
  b.type = 'button';
  b.dataset.id = id;
  b.dataset.action = 'cancel';
  b.addEventListener('click', async () => {
    if (b.dataset.armed !== '1') {
      b.dataset.armed = '1';
      b.textContent = 'Really cancel?';
      return;
    }
    const res = await api('DELETE', '/series/' + encodeURIComponent(id));
    await loadSeries();
    if (res.status === 200) say('series-msg', id + ': cancelled');
    else if (res.status === 409) say('series-msg', id + ': too late at ' + showTime(res.body.finished_at), true);
    else say('series-msg', id + ': ' + (res.status === 404 ? 'unknown' : errorText(res)), true);
  });
  b.addEventListener('blur', () => { b.dataset.armed = ''; b.textContent = 'Cancel'; });
  return b;
}

async function pauseSeries(id, verb) {
  const res = await api('POST', '/series/' + encodeURIComponent(id) + '/' + verb);
  await loadSeries();
  if (res.status === 200) say('series-msg', id + ': ' + res.body.result);
  else if (res.status === 409) say('series-msg', id + ': too late at ' +
                                   showTime(res.body.cancelled_at || res.body.finished_at), true);
  else say('series-msg', id + ': ' + (res.status === 404 ? 'unknown' : errorText(res)), true);
}

function loadGroup() {
  $('group-form').hidden = !may('producer');
  $('group-role').hidden = may('producer');
}

const loaders = { load: loadLoad, dead: loadDead, delivery: loadDelivery, fleet: loadFleet,
                  series: loadSeries, group: loadGroup, bookings: () => loadBookings() };

document.addEventListener('DOMContentLoaded', () => {
  $('login-form').addEventListener('submit', login);
  $('logout').addEventListener('click', () => logout());
  $('task-form').addEventListener('submit', lookUp);
  $('member-form').addEventListener('submit', listGroup);
  $('cancel').addEventListener('click', () => {
    $('cancel-confirm').hidden = false;
    $('cancel-yes').focus();
  });
  $('cancel-yes').addEventListener('click', cancelTask);
  $('cancel-no').addEventListener('click', () => { $('cancel-confirm').hidden = true; });
  $('group-form').addEventListener('submit', askGroup);
  $('groups-more').addEventListener('click', () => loadBookings(true));
  $('tasks-form').addEventListener('submit', listTasks);
  $('tasks-more').addEventListener('click', () => listTasks(null, true));
  $('members-more').addEventListener('click', () => showGroup(shownGroup, true));
  $('group-page-cancel').addEventListener('click', () => {
    $('group-page-confirm').hidden = false;
    $('group-page-yes').focus();
  });
  $('group-page-yes').addEventListener('click', cancelShownGroup);
  $('group-page-no').addEventListener('click', () => { $('group-page-confirm').hidden = true; });
  $('group-yes').addEventListener('click', cancelGroup);
  $('group-no').addEventListener('click', () => { $('group-confirm').hidden = true; });
  window.addEventListener('hashchange', () => show(location.hash.slice(1)));
  show(location.hash.slice(1));
});
