#if Server
/// The page's HTML, CSS and JavaScript, compiled into the binary.
enum LivePageAssets {
    /// The page, its inline style and scripts marked with `nonce`, the one
    /// its Content-Security-Policy allows.
    static func document(title: String, configuration: String, nonce: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        <style nonce="\(nonce)">\(style)</style>
        </head>
        <body>
        <header><h1>\(title)</h1><p id="status" class="connecting">connecting…</p></header>
        <main id="panels"></main>
        <script id="live-configuration" type="application/json" nonce="\(nonce)">\(configuration)</script>
        <script nonce="\(nonce)">\(script)</script>
        </body>
        </html>

        """
    }

    static let style = #"""
        :root { color-scheme: light dark; --accent: #2f6fdf; --inserted: #d8f5d0; --updated: #fff1b8;
          --deleted: #f8d4d4; --muted: #777; --line: #ddd; --panel: #fff; --page: #f4f5f7; }
        @media (prefers-color-scheme: dark) { :root { --inserted: #1f4a1a; --updated: #5a4a10; --deleted: #5a1f1f;
          --line: #333; --panel: #1c1d20; --page: #111214; --muted: #999; } }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--page); }
        header { display: flex; align-items: baseline; gap: 1.5em; padding: 0.8em 1.2em; border-bottom: 1px solid var(--line); }
        h1 { font-size: 1.1em; margin: 0; font-weight: 600; }
        #status { margin: 0; color: var(--muted); font-variant-numeric: tabular-nums; }
        #status::before { content: "●"; margin-right: 0.4em; }
        #status.live::before { color: #2a9d3a; }
        #status.connecting::before, #status.reconnecting::before { color: #d08a00; }
        #status.failed::before { color: #c0392b; }
        #status.waiting::before { color: #d08a00; }
        main { display: flex; flex-direction: column; gap: 1.2em; padding: 1.2em; }
        section.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 0.8em 1em; }
        section.panel h2 { font-size: 1em; margin: 0 0 0.6em; font-weight: 600; }
        section.panel h2 small { color: var(--muted); font-weight: normal; margin-left: 0.6em; }
        .views { display: flex; gap: 1.2em; align-items: flex-start; flex-wrap: wrap; }
        .table-wrap { flex: 1 1 420px; overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
        th, td { text-align: left; padding: 0.25em 0.7em; border-bottom: 1px solid var(--line); white-space: nowrap; }
        th { font-weight: 600; color: var(--muted); }
        td.number { text-align: right; }
        td.null { color: var(--muted); font-style: italic; }
        tr { position: relative; }
        tr.inserted { animation: inserted 2s ease-out; }
        @keyframes inserted { from { background: var(--inserted); } to { background: transparent; } }
        tr.leaving { opacity: 0; transition: opacity 0.6s ease-out; background: var(--deleted); }
        tr.moving { transition: transform 0.6s ease-in-out; }
        td.changed { animation: changed 2s ease-out; }
        @keyframes changed { from { background: var(--updated); } to { background: transparent; } }
        td .old { color: var(--muted); text-decoration: line-through; margin-right: 0.3em; }
        td .arrow { color: var(--muted); margin-right: 0.3em; }
        p.empty { color: var(--muted); margin: 0.3em 0; }
        svg.plane { flex: 0 0 auto; width: 420px; height: 320px; background: var(--page); border-radius: 6px; }
        svg.plane .point { transition: transform 0.6s ease-in-out, opacity 0.6s; }
        svg.plane .point circle { fill: var(--accent); stroke: var(--panel); stroke-width: 1.5; }
        svg.plane .point text { font-size: 11px; fill: currentColor; }
        svg.plane .point.added circle { animation: added 0.8s ease-out; }
        @keyframes added { from { r: 14; fill: #2a9d3a; } }
        svg.plane .point.leaving { opacity: 0; }
        svg.plane .point.updated circle { animation: updated 1s ease-out; }
        @keyframes updated { from { fill: #d08a00; } }
        """#

    static let script = #"""
        "use strict";
        const configuration = JSON.parse(document.getElementById("live-configuration").textContent);
        const statusLine = document.getElementById("status");
        const panels = [];
        let lastChange = null;
        // What the server says about the data (a lock that delays it), or null.
        let notice = null;

        // What a value of the tool's JSON shows as, and whether it is a number.
        function valueText(value) {
          if (value === null) return "NULL";
          if (typeof value === "object") {
            if ("blob" in value) return "X'" + value.blob + "'";
            if ("textBytes" in value) return "bytes " + value.textBytes;
            return JSON.stringify(value);
          }
          return String(value);
        }
        // The indexes of a longest strictly increasing run of the values
        // that are not negative (patience sorting, O(n log n)).
        function increasingRun(values) {
          const tails = [], tailIndexes = [], previous = new Array(values.length).fill(-1);
          values.forEach((value, index) => {
            if (value < 0) return;
            let low = 0, high = tails.length;
            while (low < high) {
              const middle = (low + high) >> 1;
              if (tails[middle] < value) low = middle + 1; else high = middle;
            }
            tails[low] = value;
            tailIndexes[low] = index;
            previous[index] = low > 0 ? tailIndexes[low - 1] : -1;
          });
          const run = new Set();
          for (let index = tailIndexes.length > 0 ? tailIndexes[tailIndexes.length - 1] : -1; index >= 0; index = previous[index]) {
            run.add(index);
          }
          return run;
        }
        function isNumeric(value) {
          return typeof value === "number" || (typeof value === "string" && /^-?(\d+|Infinity)$/.test(value));
        }

        function updateStatus() {
          const states = panels.map(panel => panel.state);
          let state = "live";
          if (states.includes("failed")) state = "failed";
          else if (states.includes("reconnecting")) state = "reconnecting";
          else if (states.includes("connecting")) state = "connecting";
          if (state === "live" && notice) state = "waiting";
          const words = { live: "live", waiting: "waiting", connecting: "connecting…", reconnecting: "reconnecting…", failed: "failed" };
          let text = words[state];
          const reasons = panels.map(panel => panel.reason).filter(reason => reason);
          if (state === "waiting") text += " (" + notice + ")";
          else if (reasons.length > 0 && state !== "live") text += " (" + reasons[0] + ")";
          text += lastChange ? " · last change " + lastChange.toLocaleTimeString() : " · no change yet";
          statusLine.className = state;
          statusLine.textContent = text;
        }

        class Panel {
          constructor(index, settings, container) {
            this.settings = settings;
            this.columns = [];
            this.entries = [];     // { key, row, tr, point }, in the displayed order
            this.state = "connecting";
            this.reason = null;
            const section = document.createElement("section");
            section.className = "panel";
            section.id = "panel-" + index;
            const heading = document.createElement("h2");
            heading.textContent = settings.title;
            this.count = document.createElement("small");
            heading.appendChild(this.count);
            section.appendChild(heading);
            const views = document.createElement("div");
            views.className = "views";
            const wrap = document.createElement("div");
            wrap.className = "table-wrap";
            this.table = document.createElement("table");
            this.thead = this.table.createTHead();
            this.tbody = this.table.createTBody();
            wrap.appendChild(this.table);
            this.empty = document.createElement("p");
            this.empty.className = "empty";
            this.empty.textContent = "no rows";
            wrap.appendChild(this.empty);
            views.appendChild(wrap);
            this.plane = document.createElementNS("http://www.w3.org/2000/svg", "svg");
            this.plane.setAttribute("class", "plane");
            this.plane.setAttribute("viewBox", "0 0 420 320");
            this.plane.style.display = "none";
            views.appendChild(this.plane);
            section.appendChild(views);
            container.appendChild(section);
            this.connect();
          }

          connect() {
            const source = new EventSource(this.settings.events);
            source.onopen = () => { this.state = "live"; this.reason = null; updateStatus(); };
            source.addEventListener("rows", event => { this.showRows(JSON.parse(event.data).rows); this.changed(); });
            source.addEventListener("diff", event => { this.apply(JSON.parse(event.data)); this.changed(); });
            source.addEventListener("notice", event => { notice = JSON.parse(event.data).notice; updateStatus(); });
            source.addEventListener("error", event => {
              // A server's error event carries its reason; the browser's has none.
              if (event.data) this.reason = JSON.parse(event.data).error;
              if (source.readyState === EventSource.CLOSED) {
                // Refused (a 503 at the subscriber limit, a server that went
                // away): the browser gives up, the page tries again.
                this.state = "failed";
                setTimeout(() => this.connect(), 3000);
              } else {
                this.state = "reconnecting";
              }
              updateStatus();
            });
          }

          changed() {
            lastChange = new Date();
            this.state = "live";
            this.count.textContent = this.entries.length + (this.entries.length === 1 ? " row" : " rows");
            this.empty.style.display = this.entries.length === 0 ? "" : "none";
            this.drawPoints();
            updateStatus();
          }

          keyOf(row) {
            const keys = this.settings.keys;
            return JSON.stringify(keys.length > 0 ? keys.map(key => row[key]) : row);
          }

          // The whole result: the table is built anew.
          showRows(rows) {
            for (const entry of this.entries) this.removePoint(entry, false);
            this.entries = [];
            this.tbody.replaceChildren();
            const columns = rows.length > 0 ? Object.keys(rows[0]) : this.columns;
            if (columns.join("\u0000") !== this.columns.join("\u0000") || this.thead.rows.length === 0) {
              this.columns = columns;
              this.thead.replaceChildren();
              const header = this.thead.insertRow();
              for (const column of columns) {
                const th = document.createElement("th");
                th.textContent = column;
                header.appendChild(th);
              }
              this.coordinates = this.findCoordinates();
              this.plane.style.display = this.coordinates ? "" : "none";
            }
            for (const row of rows) {
              const entry = { key: this.keyOf(row), row, tr: this.makeRow(row) };
              this.entries.push(entry);
              this.tbody.appendChild(entry.tr);
            }
          }

          // One difference: deletions, updates, insertions, moves.
          apply(diff) {
            const byKey = new Map();
            for (const entry of this.entries) {
              if (!byKey.has(entry.key)) byKey.set(entry.key, []);
              byKey.get(entry.key).push(entry);
            }
            const take = row => {
              const list = byKey.get(this.keyOf(row));
              return list && list.length > 0 ? list.shift() : null;
            };
            const before = this.settings.ordered ? this.positions() : null;
            const gone = new Set();
            for (const row of diff.deleted) {
              const entry = take(row);
              if (!entry) continue;
              gone.add(entry);
              entry.tr.classList.add("leaving");
              entry.tr.dataset.leaving = "";
              setTimeout(() => entry.tr.remove(), 600);
              this.removePoint(entry, true);
            }
            diff.updated.forEach((row, index) => {
              const entry = (byKey.get(this.keyOf(row)) || [])[0];
              if (entry) this.update(entry, row, diff.previous[index] || {});
            });
            let kept = this.entries.filter(entry => !gone.has(entry));
            const inserted = diff.inserted.map(row => {
              const entry = { key: this.keyOf(row), row, tr: this.makeRow(row), isNew: true };
              entry.tr.classList.add("inserted");
              return entry;
            });
            if (this.settings.ordered) {
              const moved = new Map();
              for (const move of diff.moved || []) {
                const entry = kept.find(candidate => candidate.key === this.keyOf(move.row) && !moved.has(candidate));
                if (entry) moved.set(entry, move.to - 1);
              }
              const slots = new Array(kept.length + inserted.length).fill(null);
              inserted.forEach((entry, index) => { slots[(diff.insertedAt || [])[index] - 1] = entry; });
              for (const [entry, position] of moved) slots[position] = entry;
              const rest = kept.filter(entry => !moved.has(entry));
              let next = 0;
              for (let position = 0; position < slots.length; position++) {
                if (slots[position] === null) slots[position] = rest[next++];
              }
              this.entries = slots.filter(entry => entry);
            } else {
              this.entries = kept.concat(inserted);
            }
            this.placeRows();
            if (before) this.slide(before);
          }

          // The rows in their order, moving as few as can be: a row moved in
          // the document restarts its animations (every row flashed again at
          // each change when all were appended anew). The rows that keep
          // their relative order (a longest increasing run of their current
          // places) stay; the others, and new rows, go before their next
          // row. Leaving rows fade where they were.
          placeRows() {
            const places = new Map();
            let place = 0;
            for (let node = this.tbody.firstChild; node; node = node.nextSibling) places.set(node, place++);
            const stays = increasingRun(this.entries.map(entry => places.has(entry.tr) ? places.get(entry.tr) : -1));
            let next = null;
            for (let index = this.entries.length - 1; index >= 0; index--) {
              const tr = this.entries[index].tr;
              if (!stays.has(index)) this.tbody.insertBefore(tr, next);
              next = tr;
            }
          }

          positions() {
            const positions = new Map();
            for (const entry of this.entries) positions.set(entry, entry.tr.getBoundingClientRect().top);
            return positions;
          }

          // Rows that changed position slide from where they were.
          slide(before) {
            for (const entry of this.entries) {
              if (!before.has(entry)) continue;
              const offset = before.get(entry) - entry.tr.getBoundingClientRect().top;
              if (Math.abs(offset) < 1) continue;
              entry.tr.classList.remove("moving");
              entry.tr.style.transform = "translateY(" + offset + "px)";
              entry.tr.getBoundingClientRect();
              entry.tr.classList.add("moving");
              entry.tr.style.transform = "";
            }
          }

          makeRow(row) {
            const tr = document.createElement("tr");
            tr.dataset.key = this.keyOf(row);
            for (const column of this.columns) tr.appendChild(this.makeCell(row[column]));
            return tr;
          }

          makeCell(value) {
            const td = document.createElement("td");
            this.fillCell(td, value);
            return td;
          }

          fillCell(td, value) {
            td.dataset.value = JSON.stringify(value === undefined ? null : value);
            td.className = value === null ? "null" : isNumeric(value) ? "number" : "";
            td.textContent = valueText(value);
          }

          update(entry, row, previous) {
            entry.row = row;
            entry.tr.dataset.key = this.keyOf(row);
            this.columns.forEach((column, index) => {
              const td = entry.tr.cells[index];
              if (!td) return;
              this.fillCell(td, row[column]);
              if (column in previous) {
                const old = document.createElement("span");
                old.className = "old";
                old.textContent = valueText(previous[column]);
                const arrow = document.createElement("span");
                arrow.className = "arrow";
                arrow.textContent = "→";
                td.prepend(old, arrow);
                td.classList.remove("changed");
                td.getBoundingClientRect();
                td.classList.add("changed");
                setTimeout(() => { if (td.firstChild === old) { old.remove(); arrow.remove(); } }, 2000);
              }
            });
            if (entry.point) entry.point.classList.add("updated");
          }

          // MARK: the plane

          findCoordinates() {
            const map = this.settings.map;
            if (map === null) return null;
            const has = name => this.columns.includes(name);
            if (typeof map === "object") return has(map.x) && has(map.y) ? map : null;
            const lower = this.columns.map(column => column.toLowerCase());
            const find = names => { const index = lower.findIndex(name => names.includes(name)); return index < 0 ? null : this.columns[index]; };
            const x = find(["x"]), y = find(["y"]);
            if (x && y) return { x, y };
            const lon = find(["lon", "lng", "longitude"]), lat = find(["lat", "latitude"]);
            return lon && lat ? { x: lon, y: lat } : null;
          }

          removePoint(entry, animated) {
            const point = entry.point;
            if (!point) return;
            entry.point = null;
            if (!animated) { point.remove(); return; }
            point.classList.add("leaving");
            setTimeout(() => point.remove(), 600);
          }

          drawPoints() {
            if (!this.coordinates) return;
            const { x, y } = this.coordinates;
            const number = value => typeof value === "number" ? value : Number(value);
            const placed = this.entries.filter(entry => Number.isFinite(number(entry.row[x])) && Number.isFinite(number(entry.row[y])));
            const xs = placed.map(entry => number(entry.row[x])), ys = placed.map(entry => number(entry.row[y]));
            const minX = Math.min(...xs), maxX = Math.max(...xs), minY = Math.min(...ys), maxY = Math.max(...ys);
            const spanX = maxX - minX || 1, spanY = maxY - minY || 1;
            const label = this.columns.find(column => ["name", "title", "label"].includes(column.toLowerCase()));
            for (const entry of this.entries) {
              const valueX = number(entry.row[x]), valueY = number(entry.row[y]);
              if (!Number.isFinite(valueX) || !Number.isFinite(valueY)) { this.removePoint(entry, true); continue; }
              if (!entry.point) {
                entry.point = document.createElementNS("http://www.w3.org/2000/svg", "g");
                entry.point.setAttribute("class", "point added");
                const circle = document.createElementNS("http://www.w3.org/2000/svg", "circle");
                circle.setAttribute("r", "6");
                const text = document.createElementNS("http://www.w3.org/2000/svg", "text");
                text.setAttribute("x", "9");
                text.setAttribute("y", "4");
                entry.point.append(circle, text);
                this.plane.appendChild(entry.point);
              }
              entry.point.dataset.key = entry.key;
              entry.point.dataset.x = JSON.stringify(entry.row[x]);
              entry.point.dataset.y = JSON.stringify(entry.row[y]);
              entry.point.lastChild.textContent = label ? valueText(entry.row[label]) : "";
              const left = 30 + (valueX - minX) / spanX * 330, top = 290 - (valueY - minY) / spanY * 260;
              entry.point.style.transform = "translate(" + left.toFixed(1) + "px, " + top.toFixed(1) + "px)";
              const point = entry.point;
              setTimeout(() => point.classList.remove("added", "updated"), 1000);
            }
          }
        }

        const container = document.getElementById("panels");
        configuration.panels.forEach((settings, index) => panels.push(new Panel(index, settings, container)));
        updateStatus();
        """#
}
#endif
