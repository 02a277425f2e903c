// The push-to-talk page: hold to talk (button, space bar or touch), let go, hear the answer.
// Protocol: docs/protocol.md. State for tests and screen readers is in window.callswarm.
const RATE = 16000;
// The gateway names this browser's caller and signs it in an HttpOnly cookie; the
// socket resumes the conversation only with that cookie. The page never asks for an
// id of its own choosing: a link could then hand a caller an id someone else holds.
async function callerId() {
  const response = await fetch("/api/v1/caller", { method: "POST" });
  if (!response.ok) throw new Error(`caller id: HTTP ${response.status}`);
  return (await response.json()).client_id;
}

// The page names the business the gateway answers for (its agency's, or the settings').
fetch("/api/info").then((r) => r.json()).then((info) => {
  if (info.shop) {
    document.getElementById("shop").textContent = info.shop;
    document.title = `callswarm: talk to ${info.shop}`;
  }
}).catch(() => {});

const talk = document.getElementById("talk");
const statusLine = document.getElementById("status");
const agentLine = document.getElementById("agent");
const conversation = document.getElementById("conversation");

const state = {
  clientId: "", status: "connecting", agent: "", talking: false,
  sentSeconds: 0, receivedSeconds: 0, playedSeconds: 0, skippedSeconds: 0, transcripts: [], errors: [], replies: 0,
};
window.callswarm = state;

const LABELS = {
  connecting: "Connecting…", ready: "Ready: hold the button to talk.",
  warming: "Warming up: the assistant will answer in a moment.",
  listening: "Listening…", thinking: "Thinking…", speaking: "Speaking…",
  "mic-denied": "The microphone is blocked. Allow it in the browser to talk.",
  offline: "Disconnected. Reconnecting…", error: "Something went wrong.",
};

function setStatus(status, detail) {
  state.status = status;
  statusLine.dataset.state = status;
  statusLine.textContent = detail || LABELS[status] || status;
}

function setAgent(agent) {
  state.agent = agent;
  agentLine.textContent = agent || "…";
}

let current = null; // the assistant bubble being written
function addMessage(role, text, agent) {
  const item = document.createElement("li");
  item.className = role;
  const who = document.createElement("span");
  who.className = "who";
  who.textContent = role === "user" ? "You" : (agent || state.agent || "assistant");
  const body = document.createElement("span");
  body.className = "text";
  body.textContent = text;
  item.append(who, body);
  conversation.append(item);
  item.scrollIntoView({ block: "end" });
  return item;
}

// --- audio out: gapless playback of PCM16 frames through Web Audio -------------------
let context = null;
let playAt = 0;
const playing = new Set();

function audioContext() {
  if (!context) context = new AudioContext({ sampleRate: RATE });
  return context;
}

function play(buffer) {
  const ctx = audioContext();
  const pcm = new Int16Array(buffer);
  // Browsers start audio only after the user touches the page: audio that arrives
  // before (the greeting) is shown as text but not queued to burst out on the first press.
  if (ctx.state !== "running") { state.skippedSeconds += pcm.length / RATE; return; }
  const audio = ctx.createBuffer(1, pcm.length, RATE);
  const samples = audio.getChannelData(0);
  for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 0x8000;
  const source = ctx.createBufferSource();
  source.buffer = audio;
  source.connect(ctx.destination);
  playAt = Math.max(playAt, ctx.currentTime + 0.05);
  source.start(playAt);
  playAt += audio.duration;
  state.receivedSeconds += audio.duration;
  playing.add(source);
  if (state.status !== "listening" && state.status !== "speaking") setStatus("speaking");
  source.onended = () => {
    playing.delete(source);
    state.playedSeconds += audio.duration;
    if (!playing.size && state.status === "speaking") setStatus("ready");
  };
}

function stopPlayback() {
  for (const source of playing) source.stop();
  playing.clear();
  playAt = 0;
}

// --- audio in: the microphone as 16 kHz PCM16, sent only while talking --------------
let microphone = null;
async function openMicrophone() {
  if (microphone) return microphone;
  const ctx = audioContext();
  await ctx.resume();
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true },
  });
  await ctx.audioWorklet.addModule("/static/capture-worklet.js");
  const node = new AudioWorkletNode(ctx, "capture");
  node.port.onmessage = (event) => {
    if (state.talking && socket && socket.readyState === WebSocket.OPEN) {
      socket.send(event.data);
      state.sentSeconds += event.data.byteLength / 2 / RATE;
    }
  };
  ctx.createMediaStreamSource(stream).connect(node);
  microphone = { stream, node };
  return microphone;
}

// --- the socket ---------------------------------------------------------------------
let socket = null;
let retry = 500;
async function connect() {
  setStatus("connecting");
  try {
    state.clientId = await callerId();
  } catch (error) {
    setStatus("offline");
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 8000);
    return;
  }
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws/voice/${encodeURIComponent(state.clientId)}`);
  socket.binaryType = "arraybuffer";
  socket.onopen = () => {
    retry = 500;
    socket.send(JSON.stringify({ type: "start", sample_rate: RATE, encoding: "pcm16" }));
  };
  socket.onmessage = (event) => {
    if (typeof event.data !== "string") {
      play(event.data);
      return;
    }
    handle(JSON.parse(event.data));
  };
  socket.onclose = (event) => {
    talk.disabled = true;
    if (event.code === 4001) { setStatus("offline", "This conversation continued in another tab."); return; }
    setStatus("offline");
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 8000);
  };
}

function handle(message) {
  switch (message.type) {
    case "warming": setStatus("warming"); break;
    case "ready":
      state.clientId = message.client_id;
      conversation.replaceChildren();
      for (const m of message.history) addMessage(m.role, m.text, m.agent);
      setAgent(message.agent);
      break;
    case "started":
      talk.disabled = false;
      if (state.status === "connecting" || state.status === "warming") setStatus("ready");
      break;
    case "listening": setStatus("listening"); break;
    case "thinking": setStatus("thinking"); break;
    case "transcript":
      state.transcripts.push(message.text);
      if (message.text) addMessage("user", message.text);
      break;
    case "agent": setAgent(message.agent); break;
    case "reply_text":
      if (!current) current = addMessage("assistant", "", state.agent);
      current.querySelector(".text").textContent += (current.querySelector(".text").textContent ? " " : "") + message.text;
      break;
    case "reply_done": case "interrupted":
      current = null;
      state.replies += 1;
      break;
    case "error":
      state.errors.push(message);
      setStatus("error", `Error: ${message.message}`);
      break;
  }
}

// --- hold to talk -------------------------------------------------------------------
async function press() {
  if (state.talking || talk.disabled) return;
  try {
    await openMicrophone();
  } catch (error) {
    setStatus("mic-denied");
    return;
  }
  if (playing.size) {
    stopPlayback();
    socket.send(JSON.stringify({ type: "interrupt" }));
  }
  state.talking = true;
  talk.setAttribute("aria-pressed", "true");
  talk.textContent = "Listening: let go when done";
  setStatus("listening");
}

function release() {
  if (!state.talking) return;
  state.talking = false;
  talk.setAttribute("aria-pressed", "false");
  talk.textContent = "Hold to talk";
  socket.send(JSON.stringify({ type: "release" }));
  setStatus("thinking");
}

talk.addEventListener("pointerdown", (event) => { event.preventDefault(); talk.setPointerCapture(event.pointerId); press(); });
talk.addEventListener("pointerup", release);
talk.addEventListener("pointercancel", release);
talk.addEventListener("contextmenu", (event) => event.preventDefault());
document.addEventListener("keydown", (event) => {
  if (event.code === "Space" && !event.repeat) { event.preventDefault(); press(); }
});
document.addEventListener("keyup", (event) => {
  if (event.code === "Space") { event.preventDefault(); release(); }
});

connect();
