extension Assets {
    /// `app.js`: live updates over SSE and the log follow, by hand, no framework. On any event
    /// (at most once a second) it fetches the page again and swaps in its `<main>`; on an
    /// attempt's page it appends what the log gained (`Range: bytes=OFFSET-`), rendering ANSI
    /// colours as the server does, and keeps the end in view only while the reader is there.
    static let script = #"""
        // jobrunner's pages: live updates over Server-Sent Events, and the log follow.
        (function () {
          "use strict";
          var main = document.getElementById("main");
          if (!main) { return; }
          var log = document.getElementById("log");
          var lastRefresh = 0, refreshTimer = null, refreshing = false, again = false, heldUntil = 0;
          function hold() { heldUntil = Date.now() + 1500; }
          main.addEventListener("pointerdown", hold, true);
          main.addEventListener("keydown", hold, true);

          function refresh() {
            if (refreshing) { again = true; return; }
            var wait = 1000 - (Date.now() - lastRefresh);
            if (wait > 0) {
              if (!refreshTimer) {
                refreshTimer = setTimeout(function () { refreshTimer = null; refresh(); }, wait);
              }
              return;
            }
            lastRefresh = Date.now();
            refreshing = true;
            function done() {
              refreshing = false;
              if (again) { again = false; refresh(); }
            }
            fetch(location.href, { headers: { "X-Partial": "1" }, credentials: "same-origin" })
              .then(function (response) { return response.ok ? response.text() : null; })
              .then(function (text) {
                if (text === null) { return; }
                var fresh = new DOMParser().parseFromString(text, "text/html").querySelector("main");
                if (!fresh) { return; }
                if (Date.now() < heldUntil) {
                  // The reader is pressing a button: swapping it away now would lose the click.
                  setTimeout(refresh, heldUntil - Date.now());
                  return;
                }
                swap(fresh);
                document.body.setAttribute("data-live", "ready");
              })
              .then(done, done);
          }

          // The new <main> replaces the old one; a followed log and its note stay as they are.
          function swap(fresh) {
            var freshLog = fresh.querySelector("#log");
            if (log && freshLog) {
              log.setAttribute("data-running", freshLog.getAttribute("data-running") || "false");
              freshLog.replaceWith(log);
              var note = document.getElementById("follow"), freshNote = fresh.querySelector("#follow");
              if (note && freshNote) { freshNote.replaceWith(note); }
            }
            var nodes = Array.prototype.slice.call(fresh.childNodes);
            main.replaceChildren.apply(main, nodes);
            if (log) { showFollow(); pull(); }
          }

          var names = ["queued", "waiting", "started", "succeeded", "failed", "retrying", "skipped",
            "blocked", "cancelled", "interrupted", "disabled", "suspended", "resumed", "output",
            "run-finished", "notify-started", "notify-succeeded", "notify-failed",
            // The store's own changes, which SPEC 5.10 does not name.
            "run", "pipeline", "current-run", "jobs-opened", "schedule", "request", "request-taken", "answer",
            "run-deleted", "missed",
            "message"];
          if (window.EventSource) {
            var source = new EventSource("/events");
            var onEvent = function (event) {
              refresh();
              if (log) { logEvent(event); }
            };
            names.forEach(function (name) { source.addEventListener(name, onEvent); });
            // What changed between the page's rendering and the stream's opening (or while it
            // was cut off) came as no event: look once as soon as it is open.
            source.addEventListener("open", function () {
              refresh();
              if (log) { pull(); }
            });
          }

          // --- The log ---
          var offset = 0, following = true, fetching = false, pullAgain = false, carry = "";
          var decoder = window.TextDecoder ? new TextDecoder() : null;
          var style = { fg: null, bg: null, b: false, d: false, i: false, u: false };

          // Where the script last put the view: a scroll event that finds it there (or lower)
          // is the script's own, even if more text came since; one above it is the reader's.
          var placed = 0;
          function toEnd() {
            log.scrollTop = log.scrollHeight;
            placed = log.scrollTop;
          }

          function running() { return log.getAttribute("data-running") === "true"; }
          function atEnd() { return log.scrollHeight - log.scrollTop - log.clientHeight < 8; }
          function showFollow() {
            var note = document.getElementById("follow");
            if (!note) { return; }
            note.textContent = !running() ? "" : following
              ? "following the log"
              : "not following: scroll to the end of the log to follow it again";
          }

          function logEvent(event) {
            var data = null;
            try { data = JSON.parse(event.data); } catch (error) { return; }
            if (data && data.job === log.getAttribute("data-job") &&
                (!data.run || data.run === log.getAttribute("data-run"))) { pull(); }
          }

          function pull() {
            if (!decoder) { return; }
            if (fetching) { pullAgain = true; return; }
            fetching = true;
            function done() {
              fetching = false;
              if (pullAgain) { pullAgain = false; pull(); }
            }
            // From the last byte already shown, so the range is never past the end (a 416
            // would be logged as an error): that byte is dropped again.
            var from = Math.max(0, offset - 1);
            var headers = offset > 0 ? { "Range": "bytes=" + from + "-" } : {};
            fetch(log.getAttribute("data-src"), { headers: headers, credentials: "same-origin" })
              .then(function (response) {
                if (!response.ok) { return null; }
                var skip = response.status === 206 ? offset - from : offset;
                return response.arrayBuffer().then(function (buffer) {
                  var bytes = new Uint8Array(buffer);
                  return bytes.subarray(Math.min(skip, bytes.length));
                });
              })
              .then(function (bytes) {
                if (!bytes || bytes.length === 0) { return; }
                var keep = following;
                offset += bytes.length;
                log.setAttribute("data-offset", String(offset));
                append(decoder.decode(bytes, { stream: true }));
                if (keep) { toEnd(); }
              })
              .then(done, done);
          }

          function classes() {
            var names = [];
            if (style.fg !== null) { names.push("fg-" + style.fg); }
            if (style.bg !== null) { names.push("bg-" + style.bg); }
            if (style.b) { names.push("b"); }
            if (style.d) { names.push("d"); }
            if (style.i) { names.push("i"); }
            if (style.u) { names.push("u"); }
            return names.join(" ");
          }

          function select(parameters) {
            var codes = parameters.split(";").map(function (part) { return parseInt(part, 10) || 0; });
            for (var k = 0; k < codes.length; k++) {
              var code = codes[k];
              if (code === 0) { style = { fg: null, bg: null, b: false, d: false, i: false, u: false }; }
              else if (code === 1) { style.b = true; }
              else if (code === 2) { style.d = true; }
              else if (code === 3) { style.i = true; }
              else if (code === 4) { style.u = true; }
              else if (code === 22) { style.b = false; style.d = false; }
              else if (code === 23) { style.i = false; }
              else if (code === 24) { style.u = false; }
              else if (code >= 30 && code <= 37) { style.fg = code - 30; }
              else if (code === 39) { style.fg = null; }
              else if (code >= 40 && code <= 47) { style.bg = code - 40; }
              else if (code === 49) { style.bg = null; }
              else if (code >= 90 && code <= 97) { style.fg = code - 82; }
              else if (code >= 100 && code <= 107) { style.bg = code - 92; }
              else if (code === 38 || code === 48) {
                if (codes[k + 1] === 5 && k + 2 < codes.length) {
                  if (codes[k + 2] < 16) {
                    if (code === 38) { style.fg = codes[k + 2]; } else { style.bg = codes[k + 2]; }
                  }
                  k += 2;
                } else if (codes[k + 1] === 2) { k += 4; }
              }
            }
          }

          // Control characters as the server shows them: line breaks and tabs kept, a carriage
          // return dropped, the others as their control pictures.
          function visible(text) {
            return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, function (c) {
              var code = c.charCodeAt(0);
              if (code === 13) { return ""; }
              if (code === 127) { return "\u2421"; }
              if (code >= 128) { return "\ufffd"; }
              return String.fromCharCode(0x2400 + code);
            });
          }

          // Where the escape sequence at i ends; -1 when the text ends first.
          function escapeEnd(text, i) {
            var n = text.length;
            if (i + 1 >= n) { return -1; }
            var kind = text.charAt(i + 1), j;
            if (kind === "[") {
              for (j = i + 2; j < n; j++) {
                var code = text.charCodeAt(j);
                if (code >= 0x40 && code <= 0x7e) { return j + 1; }
              }
              return -1;
            }
            if (kind === "]" || kind === "P" || kind === "_" || kind === "^") {
              for (j = i + 2; j < n; j++) {
                if (text.charAt(j) === "\u0007") { return j + 1; }
                if (text.charAt(j) === "\u001b") {
                  if (j + 1 >= n) { return -1; }
                  return text.charAt(j + 1) === "\\" ? j + 2 : j + 1;
                }
              }
              return -1;
            }
            return i + 2;
          }

          function append(text) {
            text = carry + text;
            carry = "";
            var fragment = document.createDocumentFragment();
            function emit(part) {
              part = visible(part);
              if (!part) { return; }
              var node = document.createTextNode(part), names = classes();
              if (names) {
                var span = document.createElement("span");
                span.className = names;
                span.appendChild(node);
                fragment.appendChild(span);
              } else {
                fragment.appendChild(node);
              }
            }
            var start = 0, i = 0;
            while (i < text.length) {
              if (text.charCodeAt(i) !== 27) { i++; continue; }
              emit(text.slice(start, i));
              var end = escapeEnd(text, i);
              if (end < 0) { carry = text.slice(i); start = text.length; break; }
              var sequence = text.slice(i, end);
              if (sequence.charAt(1) === "[" && sequence.charAt(sequence.length - 1) === "m") {
                select(sequence.slice(2, -1));
              }
              i = end;
              start = end;
            }
            if (start < text.length) { emit(text.slice(start)); }
            log.appendChild(fragment);
          }

          if (log && log.getAttribute("data-src")) {
            offset = parseInt(log.getAttribute("data-offset") || "0", 10) || 0;
            (log.getAttribute("data-sgr") || "").split(" ").forEach(function (name) {
              if (name === "b" || name === "d" || name === "i" || name === "u") { style[name] = true; }
              else if (name.indexOf("fg-") === 0) { style.fg = parseInt(name.slice(3), 10); }
              else if (name.indexOf("bg-") === 0) { style.bg = parseInt(name.slice(3), 10); }
            });
            toEnd();
            log.addEventListener("scroll", function () {
              following = atEnd() || (following && log.scrollTop >= placed - 2);
              showFollow();
            });
            showFollow();
            setInterval(function () { if (running()) { pull(); } }, 2000);
          } else {
            log = null;
          }
        })();
        """#
}
