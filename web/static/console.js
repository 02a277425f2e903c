// The operator console: live and past calls, transcripts as they happen, takeover.
// Data: the operator REST API and two SSE streams (docs/console.md). State for tests is
// in window.consoleState.
const $ = (selector, root = document) => root.querySelector(selector);
const state = { operator: "", live: [], call: null, stream: "connecting", items: 0 };
window.consoleState = state;

let callStream = null;
let allStream = null;
let pastOffset = 0;
const PAGE = 20;

async function api(path, options = {}) {
  const response = await fetch(path, {
    credentials: "same-origin",
    headers: options.body ? { "Content-Type": "application/json" } : {},
    ...options,
  });
  if (response.status === 401) { showLogin(); throw new Error("signed out"); }
  if (!response.ok) throw new Error((await response.json()).detail || response.statusText);
  return response.json();
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const seconds = (value) => (value == null ? "–" : `${value.toFixed(2)} s`);
const when = (iso) => new Date(iso).toLocaleString();
const money = (cents) => `$${(cents / 100).toFixed(2)}`;

// --- sign-in ---------------------------------------------------------------------------
function showLogin() {
  allStream?.close(); callStream?.close();
  $("#console").hidden = true;
  $("#login").hidden = false;
}

$("#login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const secret = form.get("secret");
  // The same box takes the token or the password: the server tries both.
  const response = await fetch("/api/auth/login", {
    method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ operator: form.get("operator"), token: secret, password: secret }),
  });
  if (!response.ok) { $("#login-error").textContent = (await response.json()).detail; return; }
  start();
});

$("#logout").addEventListener("click", async () => {
  await api("/api/auth/logout", { method: "POST" }).catch(() => {});
  showLogin();
});

// --- call lists ------------------------------------------------------------------------
function callItem(call) {
  const item = el("li");
  item.dataset.id = call.id;
  item.setAttribute("aria-current", String(state.call === call.id));
  item.append(el("span", "who", `${call.caller} · ${call.channel === "sip" ? "phone" : "web"}`));
  const badge = call.live ? "live" : (call.outcome || "");
  item.append(el("span", `badge ${badge}`, call.live ? `live${call.operator ? " · held" : ""}` : `${badge.replace("_", " ")} · ${when(call.started_at)}`));
  item.addEventListener("click", () => openCall(call.id));
  return item;
}

// Refreshes overlap (a hand-back, then the call's end, ms apart) and their answers may
// come back out of order: only the last one asked for may draw, or a stale list
// would show a call that ended as live until the next event.
let liveAsked = 0;
let pastAsked = 0;

async function refreshLive() {
  const asked = ++liveAsked;
  const page = await api("/api/calls?live=true&limit=200");
  if (asked !== liveAsked) return;
  state.live = page.items.map((c) => c.id);
  $("#live").replaceChildren(...page.items.map(callItem));
  $("#no-live").hidden = page.items.length > 0;
}

async function refreshPast() {
  const form = new FormData($("#filters"));
  const query = new URLSearchParams({ live: "false", limit: PAGE, offset: pastOffset });
  for (const [key, value] of form) {
    if (!value) continue;
    query.set(key, key === "since" ? new Date(value).toISOString() : value);
  }
  const asked = ++pastAsked;
  const page = await api(`/api/calls?${query}`);
  if (asked !== pastAsked) return;
  $("#past").replaceChildren(...page.items.map(callItem));
  $("#page").textContent = page.total ? `${pastOffset + 1}–${pastOffset + page.items.length} of ${page.total}` : "none";
  $("#prev").disabled = pastOffset === 0;
  $("#next").disabled = pastOffset + PAGE >= page.total;
}

$("#filters").addEventListener("submit", (event) => { event.preventDefault(); pastOffset = 0; refreshPast(); });
$("#prev").addEventListener("click", () => { pastOffset = Math.max(0, pastOffset - PAGE); refreshPast(); });
$("#next").addEventListener("click", () => { pastOffset += PAGE; refreshPast(); });

$("#search").addEventListener("submit", async (event) => {
  event.preventDefault();
  const q = new FormData(event.target).get("q");
  const hits = await api(`/api/search?${new URLSearchParams({ q })}`);
  $("#hits").replaceChildren(...hits.map((hit) => {
    const item = el("li");
    item.append(el("span", "", `${hit.role === "user" ? hit.client_id : hit.agent}: ${hit.content}`));
    item.addEventListener("click", () => openCall(hit.call_id));
    return item;
  }));
  if (!hits.length) $("#hits").replaceChildren(el("li", "empty", "Nothing found."));
});

// --- one call --------------------------------------------------------------------------
function line(view, className, who, text) {
  const item = el("li", className);
  if (who) item.append(el("span", "who", who));
  if (text) item.append(el("span", "text", text));
  $(".transcript", view).append(item);
  state.items += 1;
  item.scrollIntoView({ block: "nearest" });
  return item;
}

function toolCall(view, call, output, agent) {
  const item = line(view, "assistant tool", `${agent} used a tool`);
  const fold = el("details");
  fold.dataset.callId = call.id;
  fold.append(el("summary", "", call.name), el("pre", "args", JSON.stringify(call.arguments, null, 1)));
  fold.append(el("pre", "output", output ?? "…"));
  item.append(fold);
}

function message(view, m) {
  const who = m.role === "user" ? "caller" : m.agent;
  const className = m.agent === "operator" ? "operator" : m.role;
  if (m.role === "user" || m.role === "assistant") {
    if (m.content) line(view, className, who, m.content);
    for (const call of m.tool_calls || []) toolCall(view, call, call.output, m.agent);
  } else if (m.role === "rescue") {
    line(view, "rescue", "", `${m.agent}'s view was reset after a bad answer`);
  }
}

const NOTES = {
  agent_changed: (e) => `handed over: ${e.data.previous} → ${e.data.current}`,
  rescued: (e) => `rescued ${e.agent}: ${e.data.reason} (${e.data.strategy}) ${e.data.detail || ""}`,
  error_occurred: (e) => `error in ${e.data.where}: ${e.data.error}`,
  takeover: (e) => `${e.data.operator} took over the call`,
  handed_back: (e) => `${e.data.operator} handed the call back`,
  transfer_requested: () => "the caller asked for a person",
  turn: (e) => `voice to voice ${seconds(e.data.voice_to_voice_s)} · speech to text ${seconds(e.data.stt_s)} · first token ${seconds(e.data.first_token_s)} · first audio ${seconds(e.data.first_audio_s)}${e.data.interrupted ? " · interrupted" : ""}`,
};
const NOTE_CLASS = { rescued: "rescue", error_occurred: "error", turn: "latency" };

function note(view, e) {
  if (NOTES[e.kind]) line(view, NOTE_CLASS[e.kind] || "note", "", NOTES[e.kind](e));
}

function live(view, e) {
  if (e.kind === "user_message") message(view, { role: "user", content: e.data.content, agent: e.agent });
  else if (e.kind === "assistant_message") message(view, { role: "assistant", content: e.data.content, agent: e.agent });
  else if (e.kind === "tool_called") toolCall(view, { id: e.data.call_id, name: e.data.tool, arguments: e.data.arguments }, null, e.agent);
  else if (e.kind === "tool_output") {
    const fold = view.querySelector(`details[data-call-id="${CSS.escape(e.data.call_id)}"] .output`);
    if (fold) fold.textContent = e.data.output;
    if (e.data.tool.includes("order")) loadOrders(view, state.call);
  } else if (e.kind === "call_ended") openCall(state.call);
  else note(view, e);
}

function orders(view, list) {
  $(".orders", view).hidden = !list.length;
  $(".orders ul", view).replaceChildren(...list.map((o) => el("li", "", `#${o.id} ${o.status} · ${money(o.total_cents)}`)));
}

async function loadOrders(view, id) {
  const body = await api(`/api/calls/${id}/transcript`);
  if (state.call === id) orders(view, body.orders);
}

async function openCall(id) {
  callStream?.close();
  state.call = id;
  state.items = 0;
  const body = await api(`/api/calls/${id}/transcript`);
  if (state.call !== id) return;
  const call = body.call;
  const main = $("#call");
  main.replaceChildren($("#call-view").content.cloneNode(true));
  $(".title", main).textContent = `${call.caller} · ${call.channel === "sip" ? "phone call" : "web call"}`;
  $(".facts", main).textContent = [
    call.live ? "live now" : `${call.outcome?.replace("_", " ")}, ended by ${call.ended_by}`,
    `started ${when(call.started_at)}`,
    call.instance ? `on ${call.instance}` : "",
    call.agents.length ? `agents: ${call.agents.join(", ")}` : "",
    call.operator ? `held by ${call.operator}` : "",
  ].filter(Boolean).join(" · ");
  if (call.recording) { $(".recording", main).src = call.recording; $(".recording", main).hidden = false; }
  orders(main, body.orders);
  // Messages and events interleaved by time: who spoke, what was used, who took over.
  const rows = [
    ...body.messages.map((m) => ({ t: m.t, show: () => message(main, m) })),
    ...body.events.map((e) => ({ t: e.t, show: () => note(main, e) })),
  ].sort((a, b) => a.t - b.t);
  rows.forEach((row) => row.show());
  takeoverControls(main, call);
  for (const item of document.querySelectorAll(".calls li")) item.setAttribute("aria-current", String(item.dataset.id === id));
  if (call.live) {
    callStream = new EventSource(`/api/calls/${id}/events?after=${body.last_event_id}`);
    callStream.onmessage = (message) => live(main, JSON.parse(message.data));
  }
}

function takeoverControls(main, call) {
  const box = $(".takeover", main);
  box.hidden = !call.live;
  const held = () => { $(".take", main).hidden = true; $(".say", main).hidden = false; $(".say input", main).focus(); };
  const free = () => { $(".take", main).hidden = false; $(".say", main).hidden = true; };
  if (call.operator === state.operator) held(); else free();
  $(".take", main).addEventListener("click", async () => { await api(`/api/calls/${call.id}/takeover`, { method: "POST" }); held(); });
  $(".back", main).addEventListener("click", async () => { await api(`/api/calls/${call.id}/handback`, { method: "POST" }); free(); });
  $(".say", main).addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = $("input", event.target);
    await api(`/api/calls/${call.id}/say`, { method: "POST", body: JSON.stringify({ text: input.value }) });
    input.value = "";
  });
}

// --- every call, live ------------------------------------------------------------------
function setStream(value) {
  state.stream = value;
  $("#stream-state").dataset.state = value;
  $("#stream-state").textContent = value === "live" ? "live" : "reconnecting…";
}

function watchAll() {
  allStream?.close();
  allStream = new EventSource("/api/events");
  allStream.onopen = () => { setStream("live"); refreshLive(); };
  allStream.onerror = () => setStream("reconnecting");
  allStream.onmessage = (message) => {
    const e = JSON.parse(message.data);
    if (["call_started", "call_ended", "takeover", "handed_back"].includes(e.kind)) refreshLive();
    if (e.kind === "call_ended") refreshPast();
  };
}

async function start() {
  const me = await api("/api/auth/me");
  state.operator = me.operator;
  $("#me").textContent = me.operator;
  $("#login").hidden = true;
  $("#console").hidden = false;
  watchAll();
  await Promise.all([refreshLive(), refreshPast()]);
}

start().catch(() => {});
