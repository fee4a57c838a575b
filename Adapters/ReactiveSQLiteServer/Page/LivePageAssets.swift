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
          --deleted: #f8d4d4; --muted: #777; --line: #ddd; --panel: #fff; --page: #f4f5f7; --row: 26px; }
        @media (prefers-color-scheme: dark) { :root { --inserted: #1f4a1a; --updated: #5a4a10; --deleted: #5a1f1f;
          --line: #333; --panel: #1c1d20; --page: #111214; --muted: #999; } }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--page); }
        header { display: flex; align-items: baseline; gap: 1.5em; padding: 0.8em 1.2em; border-bottom: 1px solid var(--line); }
        h1 { font-size: 1.1em; margin: 0; font-weight: 600; }
        #status { margin: 0; color: var(--muted); font-variant-numeric: tabular-nums; }
        #status::before { content: "●"; margin-right: 0.4em; }
        #status.live::before { color: #2a9d3a; }
        #status.connecting::before, #status.reconnecting::before, #status.waiting::before { color: #d08a00; }
        #status.failed::before { color: #c0392b; }
        main { display: flex; flex-direction: column; gap: 1.2em; padding: 1.2em; }
        section.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 0.8em 1em; min-width: 0; }
        section.panel h2 { font-size: 1em; margin: 0 0 0.6em; font-weight: 600; overflow-wrap: anywhere; }
        section.panel h2 small { color: var(--muted); font-weight: normal; margin-left: 0.6em; }
        .toolbar { display: flex; gap: 0.8em; align-items: center; margin-bottom: 0.5em; flex-wrap: wrap; }
        .toolbar input { font: inherit; padding: 0.2em 0.5em; border: 1px solid var(--line); border-radius: 4px;
          background: var(--page); color: inherit; width: 16em; }
        .toolbar button { font: inherit; border: 1px solid var(--line); border-radius: 4px; background: var(--updated);
          color: inherit; padding: 0.1em 0.6em; cursor: pointer; }
        .toolbar button[hidden] { display: none; }
        p.problem { margin: 0 0 0.5em; padding: 0.4em 0.7em; border-radius: 4px; background: var(--deleted); }
        p.problem:empty { display: none; }
        .views { display: flex; gap: 1.2em; align-items: flex-start; flex-wrap: wrap; }
        .table-wrap { flex: 1 1 420px; min-width: 0; max-height: max(18em, calc(100vh - 12em)); overflow: auto;
          overflow-anchor: none; position: relative; }
        table { border-collapse: separate; border-spacing: 0; table-layout: fixed; font-variant-numeric: tabular-nums; }
        th, td { text-align: left; padding: 0 0.7em; border-bottom: 1px solid var(--line); white-space: nowrap;
          overflow: hidden; text-overflow: ellipsis; height: var(--row); }
        th { font-weight: 600; color: var(--muted); position: sticky; top: 0; background: var(--panel); z-index: 1;
          cursor: pointer; user-select: none; }
        th.number, td.number { text-align: right; }
        th[aria-sort="ascending"]::after { content: " ▲"; }
        th[aria-sort="descending"]::after { content: " ▼"; }
        td.null { color: var(--muted); font-style: italic; }
        tr.spacer td { height: 0; padding: 0; border: 0; }
        tr.inserted { animation: inserted 2s ease-out both; }
        @keyframes inserted { from { background: var(--inserted); } to { background: transparent; } }
        tr.leaving { opacity: 0; transition: opacity 0.6s ease-out; background: var(--deleted); }
        tr.moving { transition: transform 0.6s ease-in-out; }
        tr.found { outline: 2px solid var(--accent); outline-offset: -2px; }
        td.changed { animation: changed 2s ease-out both; }
        @keyframes changed { from { background: var(--updated); } to { background: transparent; } }
        td .old { color: var(--muted); text-decoration: line-through; margin-right: 0.3em; }
        td .arrow { color: var(--muted); margin-right: 0.3em; }
        p.empty { color: var(--muted); margin: 0.3em 0; }
        .plane { flex: 0 0 auto; position: relative; width: 420px; height: 320px; background: var(--page);
          border-radius: 6px; overflow: hidden; }
        .plane svg, .plane canvas { position: absolute; inset: 0; width: 420px; height: 320px; }
        .plane .point { transition: transform 0.6s ease-in-out, opacity 0.6s; }
        .plane .point circle { fill: var(--accent); stroke: var(--panel); stroke-width: 1.5; }
        .plane .point text { font-size: 11px; fill: currentColor; visibility: hidden; paint-order: stroke;
          stroke: var(--page); stroke-width: 3px; }
        .plane.labelled .point text, .plane .point:hover text { visibility: visible; }
        .plane .point.added circle { animation: added 0.8s ease-out; }
        @keyframes added { from { r: 14; fill: #2a9d3a; } }
        .plane .point.leaving { opacity: 0; }
        .plane .point.updated circle { animation: updated 1s ease-out; }
        @keyframes updated { from { fill: #d08a00; } }
        .plane .tip { position: absolute; pointer-events: none; background: var(--panel); border: 1px solid var(--line);
          border-radius: 4px; padding: 0.1em 0.4em; font-size: 12px; white-space: nowrap; max-width: 200px;
          overflow: hidden; text-overflow: ellipsis; }
        .plane .tip[hidden] { display: none; }
        """#

    static let script = #"""
        "use strict";
        const configuration = JSON.parse(document.getElementById("live-configuration").textContent);
        const statusLine = document.getElementById("status");
        const panels = [];
        let lastChange = null;
        // What the server says about the data (a lock that delays it), or null.
        let notice = null;
        // The height of a row (the CSS's --row): the table draws only the rows in
        // view, and this many more above and below them.
        const rowHeight = 26;
        const overscan = 20;
        // Above this many points the plane is a canvas (no element per point);
        // up to `fewPoints` points, every label shows, else on hover only.
        const manyPoints = 1500;
        const fewPoints = 12;
        // How long an inserted row or a changed cell stays highlighted.
        const flashDuration = 2000;
        // For tests and the curious: how long the page took to show the first
        // rows, and to apply each change (script and layout, in milliseconds).
        window.livePageMetrics = { firstRows: null, changes: [] };

        // What a value of the tool's JSON shows as.
        function valueText(value) {
          if (value === null || value === undefined) return "NULL";
          if (typeof value === "object") {
            if ("blob" in value) return "X'" + value.blob + "'";
            if ("textBytes" in value) return "bytes " + value.textBytes;
            return JSON.stringify(value);
          }
          return String(value);
        }
        function isNumeric(value) {
          return typeof value === "number" || (typeof value === "string" && /^-?(\d+|Infinity)$/.test(value));
        }
        // A value's place in a sort, as SQLite orders values: NULL, numbers, text, blobs.
        function sortKey(value) {
          if (value === null || value === undefined) return [0, 0];
          if (typeof value === "number") return [1, value];
          if (typeof value === "string") return isNumeric(value) ? [1, Number(value)] : [2, value];
          if ("textBytes" in value) return [2, value.textBytes];
          if ("blob" in value) return [3, value.blob];
          return [4, JSON.stringify(value)];
        }
        function compareKeys(a, b) {
          if (a[0] !== b[0]) return a[0] - b[0];
          return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
        }
        // The indexes of a longest strictly increasing run of the values that are
        // not negative (patience sorting, O(n log n)).
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
        function countText(count) {
          return count.toLocaleString("en-US") + (count === 1 ? " row" : " rows");
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

        function element(name, className, text) {
          const node = document.createElement(name);
          if (className) node.className = className;
          if (text !== undefined) node.textContent = text;
          return node;
        }

        // One live query: its rows in the server's order (`entries`), the rows
        // shown (`view`: filtered and sorted on the client), and the few of them
        // that the table draws.
        class Panel {
          constructor(index, settings, container) {
            this.settings = settings;
            this.columns = [];
            this.entries = [];       // { id, key, row, tr, point, sortKey, text, flash }, in the server's order
            this.byKey = new Map();  // key -> the entries with that key
            this.view = this.entries;
            this.drawn = [];         // the entries whose rows are in the table, in order
            this.sort = null;        // { column, descending }
            this.filter = "";
            this.recent = [];        // positions in the view of the latest change's rows not yet seen
            this.nextID = 0;
            this.state = "connecting";
            this.reason = null;
            this.retry = null;
            this.renderScheduled = false;
            this.planeScheduled = false;

            this.section = element("section", "panel");
            this.section.id = "panel-" + index;
            const heading = element("h2", "", settings.title);
            this.count = element("small");
            heading.appendChild(this.count);
            this.problem = element("p", "problem");
            this.problem.setAttribute("role", "alert");
            const toolbar = element("div", "toolbar");
            this.filterInput = element("input");
            this.filterInput.type = "search";
            this.filterInput.placeholder = "filter rows";
            this.filterInput.setAttribute("aria-label", "filter rows");
            this.filterInput.addEventListener("input", () => this.setFilter(this.filterInput.value));
            this.above = element("button", "above");
            this.below = element("button", "below");
            this.above.hidden = this.below.hidden = true;
            this.above.addEventListener("click", () => this.scrollToChange(-1));
            this.below.addEventListener("click", () => this.scrollToChange(1));
            toolbar.append(this.filterInput, this.above, this.below);
            const views = element("div", "views");
            this.wrap = element("div", "table-wrap");
            this.wrap.addEventListener("scroll", () => this.scheduleRender());
            this.table = element("table");
            this.colgroup = element("colgroup");
            this.table.appendChild(this.colgroup);
            this.thead = this.table.createTHead();
            this.tbody = this.table.createTBody();
            this.spacerAbove = this.makeSpacer();
            this.spacerBelow = this.makeSpacer();
            this.tbody.append(this.spacerAbove, this.spacerBelow);
            this.empty = element("p", "empty", "no rows");
            this.wrap.append(this.table, this.empty);
            this.plane = element("div", "plane");
            this.plane.hidden = true;
            this.svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
            this.svg.setAttribute("viewBox", "0 0 420 320");
            this.canvas = element("canvas");
            this.canvas.width = 420;
            this.canvas.height = 320;
            this.canvas.hidden = true;
            this.tip = element("div", "tip");
            this.tip.hidden = true;
            this.plane.append(this.svg, this.canvas, this.tip);
            this.canvas.addEventListener("mousemove", event => this.showTip(event));
            this.canvas.addEventListener("mouseleave", () => { this.tip.hidden = true; });
            views.append(this.wrap, this.plane);
            this.section.append(heading, this.problem, toolbar, views);
            container.appendChild(this.section);
            this.connect();
          }

          makeSpacer() {
            const tr = element("tr", "spacer");
            tr.appendChild(element("td"));
            return tr;
          }

          connect() {
            clearTimeout(this.retry);
            const source = new EventSource(this.settings.events);
            source.onopen = () => { this.state = "live"; updateStatus(); };
            source.addEventListener("rows", event => this.measure(false, () => this.showRows(JSON.parse(event.data).rows)));
            source.addEventListener("diff", event => this.measure(true, () => this.apply(JSON.parse(event.data))));
            source.addEventListener("notice", event => { notice = JSON.parse(event.data).notice; updateStatus(); });
            source.addEventListener("error", event => {
              if (event.data) {
                // The server ended the subscription, and says why (a result over
                // its row limit, a query that fails): shown until an attempt
                // succeeds, tried again in a while.
                this.reason = JSON.parse(event.data).error;
                this.problem.textContent = this.reason;
                source.close();
                this.state = "failed";
                this.retry = setTimeout(() => this.connect(), 10000);
              } else if (source.readyState === EventSource.CLOSED) {
                // Refused (a 503 at the subscriber limit, a server that went
                // away): the browser gives up, the page tries again.
                this.state = "failed";
                this.retry = setTimeout(() => this.connect(), 3000);
              } else {
                this.state = "reconnecting";
              }
              updateStatus();
            });
          }

          // Runs an event's work, then forces the layout it causes, and records
          // how long both took.
          measure(isChange, work) {
            const start = performance.now();
            work();
            this.changed();
            void this.tbody.offsetHeight;
            const end = performance.now();
            const metrics = window.livePageMetrics;
            if (isChange) {
              metrics.changes.push(end - start);
            } else if (!metrics.firstRows && this.entries.length > 0) {
              metrics.firstRows = { handling: end - start, sinceNavigation: end };
            }
          }

          changed() {
            lastChange = new Date();
            this.state = "live";
            this.reason = null;
            this.problem.textContent = "";
            this.showCount();
            this.schedulePlane();
            updateStatus();
          }

          showCount() {
            const shown = this.view.length, total = this.entries.length;
            this.count.textContent = shown === total ? countText(total) : shown.toLocaleString("en-US") + " of " + countText(total);
            this.section.dataset.rows = String(shown);
            this.empty.style.display = shown === 0 ? "" : "none";
            this.empty.textContent = total === 0 ? "no rows" : "no rows match the filter";
          }

          keyOf(row) {
            const keys = this.settings.keys;
            return JSON.stringify(keys.length > 0 ? keys.map(key => row[key]) : row);
          }

          makeEntry(row) {
            const entry = { id: this.nextID++, key: this.keyOf(row), row, tr: null, point: null,
              sortKey: undefined, text: undefined, flash: null, inView: false };
            const list = this.byKey.get(entry.key);
            if (list) list.push(entry); else this.byKey.set(entry.key, [entry]);
            return entry;
          }

          forget(entry) {
            const list = this.byKey.get(entry.key);
            if (!list) return;
            const index = list.indexOf(entry);
            if (index >= 0) list.splice(index, 1);
            if (list.length === 0) this.byKey.delete(entry.key);
          }

          // MARK: the whole result

          showRows(rows) {
            for (const entry of this.entries) this.removePoint(entry, false);
            for (const entry of this.drawn) if (entry.tr) entry.tr.remove();
            this.drawn = [];
            this.byKey = new Map();
            this.recent = [];
            const columns = rows.length > 0 ? Object.keys(rows[0]) : this.columns;
            if (columns.join("\u0000") !== this.columns.join("\u0000") || this.thead.rows.length === 0) {
              this.setColumns(columns, rows);
            }
            this.entries = rows.map(row => this.makeEntry(row));
            this.rebuildView();
            this.render();
          }

          setColumns(columns, rows) {
            this.columns = columns;
            this.sort = null;
            // Right-aligned numbers, and widths that do not change with the rows:
            // both from the header and a sample of the first rows.
            const sample = rows.slice(0, 200);
            this.numeric = columns.map(column => {
              const values = sample.map(row => row[column]).filter(value => value !== null && value !== undefined);
              return values.length > 0 && values.every(isNumeric);
            });
            // Room for an update's old and new values side by side.
            const widths = columns.map(column => Math.min(40, Math.max(6, column.length + 3,
              ...sample.map(row => 2 * valueText(row[column]).length + 3))));
            this.colgroup.replaceChildren(...widths.map(width => {
              const col = element("col");
              col.style.width = "calc(" + width + "ch + 1.6em)";
              return col;
            }));
            const total = widths.reduce((sum, width) => sum + width, 0);
            this.table.style.width = "calc(" + total + "ch + " + (1.6 * columns.length) + "em)";
            this.thead.replaceChildren();
            const header = this.thead.insertRow();
            columns.forEach((column, index) => {
              const th = element("th", this.numeric[index] ? "number" : "", column);
              th.title = "sort by " + column;
              th.addEventListener("click", () => this.toggleSort(index));
              header.appendChild(th);
            });
            for (const spacer of [this.spacerAbove, this.spacerBelow]) spacer.firstChild.colSpan = Math.max(1, columns.length);
            this.coordinates = this.findCoordinates();
            this.plane.hidden = !this.coordinates;
          }

          // MARK: a difference

          // Deletions, updates, insertions and moves, from the rows the server
          // last sent (see sqlite-watch's JSON format).
          apply(diff) {
            const now = performance.now();
            const gone = new Set();
            const take = row => {
              const list = this.byKey.get(this.keyOf(row)) || [];
              return list.find(entry => !gone.has(entry)) || null;
            };
            const deleted = [];
            for (const row of diff.deleted) {
              const entry = take(row);
              if (!entry) continue;
              gone.add(entry);
              deleted.push(entry);
            }
            const updated = [];
            diff.updated.forEach((row, index) => {
              const entry = take(row);
              if (entry) updated.push([entry, row, diff.previous[index] || {}]);
            });
            const isSorted = this.sort !== null;
            const changeCount = deleted.length + updated.length + diff.inserted.length;
            const incremental = isSorted && changeCount <= 1000;
            if (incremental) {
              for (const entry of deleted) this.leaveView(entry);
              for (const [entry] of updated) this.leaveView(entry);
            }
            for (const entry of deleted) {
              this.forget(entry);
              this.removePoint(entry, true);
              if (entry.tr) {
                const tr = entry.tr;
                tr.classList.add("leaving");
                setTimeout(() => tr.remove(), 600);
                entry.tr = null;
              }
            }
            for (const [entry, row, previous] of updated) {
              entry.row = row;
              entry.sortKey = entry.text = undefined;
              entry.flash = { at: now, kind: "updated", previous };
              if (entry.tr) this.showUpdate(entry);
              if (entry.point) entry.point.classList.add("updated");
            }
            const inserted = diff.inserted.map(row => {
              const entry = this.makeEntry(row);
              entry.flash = { at: now, kind: "inserted" };
              return entry;
            });
            const movedEntries = [];
            const moves = this.settings.ordered ? diff.moved || [] : [];
            if (this.settings.ordered && gone.size + moves.length + inserted.length <= 64) {
              this.entries = this.placeFew(gone, moves, inserted, diff.insertedAt || [], movedEntries);
            } else if (this.settings.ordered) {
              // Moved rows go to their new positions, inserted ones to theirs,
              // the others fill the rest in their order.
              const old = this.entries;
              const size = old.length - gone.size + inserted.length;
              const slots = new Array(size).fill(null);
              const placed = new Set();
              for (const move of moves) {
                let entry = old[move.from - 1];
                if (!entry || gone.has(entry) || entry.key !== this.keyOf(move.row) || placed.has(entry)) entry = null;
                if (!entry) entry = (this.byKey.get(this.keyOf(move.row)) || []).find(candidate => !placed.has(candidate)) || null;
                if (!entry || move.to < 1 || move.to > size) continue;
                slots[move.to - 1] = entry;
                placed.add(entry);
                movedEntries.push(entry);
              }
              inserted.forEach((entry, index) => {
                const position = (diff.insertedAt || [])[index];
                if (position >= 1 && position <= size && slots[position - 1] === null) {
                  slots[position - 1] = entry;
                  placed.add(entry);
                }
              });
              let next = 0;
              const rest = old.filter(entry => !gone.has(entry) && !placed.has(entry))
                .concat(inserted.filter(entry => !placed.has(entry)));
              for (let position = 0; position < size; position++) {
                if (slots[position] === null) slots[position] = rest[next++];
              }
              this.entries = slots.filter(entry => entry);
            } else if (gone.size <= 64) {
              for (const entry of gone) {
                const index = this.entries.indexOf(entry);
                if (index >= 0) this.entries.splice(index, 1);
              }
              for (const entry of inserted) this.entries.push(entry);
            } else {
              this.entries = this.entries.filter(entry => !gone.has(entry)).concat(inserted);
            }
            if (incremental) {
              for (const [entry] of updated) this.enterView(entry);
              for (const entry of inserted) this.enterView(entry);
            } else {
              this.rebuildView();
            }
            const recent = new Set(inserted.concat(updated.map(([entry]) => entry), movedEntries));
            this.locateRecent(recent);
            this.render(this.settings.ordered && !isSorted);
          }

          // The ordered rows after a small change, in place: the deleted and
          // moved rows out, then the moved and inserted rows in, by increasing
          // position (each lands at its position, the others keep their order).
          // A few native searches and shifts instead of new arrays of every row.
          placeFew(gone, moves, inserted, insertedAt, movedEntries) {
            const entries = this.entries;
            const placements = [];
            const taken = new Set();
            for (const move of moves) {
              let entry = entries[move.from - 1];
              if (!entry || gone.has(entry) || entry.key !== this.keyOf(move.row) || taken.has(entry)) {
                entry = (this.byKey.get(this.keyOf(move.row)) || []).find(candidate => !taken.has(candidate) && !gone.has(candidate)) || null;
              }
              if (!entry) continue;
              taken.add(entry);
              movedEntries.push(entry);
              placements.push([move.to - 1, entry]);
            }
            inserted.forEach((entry, index) => placements.push([(insertedAt[index] || entries.length + 1) - 1, entry]));
            for (const entry of [...gone, ...taken]) {
              const index = entries.indexOf(entry);
              if (index >= 0) entries.splice(index, 1);
            }
            placements.sort((a, b) => a[0] - b[0]);
            for (const [position, entry] of placements) entries.splice(Math.max(0, Math.min(position, entries.length)), 0, entry);
            return entries;
          }

          // MARK: the view: filter and sort

          matches(entry) {
            if (!this.filter) return true;
            if (entry.text === undefined) entry.text = this.columns.map(column => valueText(entry.row[column])).join("\u0001").toLowerCase();
            return entry.text.includes(this.filter);
          }

          compare(a, b) {
            const column = this.columns[this.sort.column];
            if (a.sortKey === undefined) a.sortKey = sortKey(a.row[column]);
            if (b.sortKey === undefined) b.sortKey = sortKey(b.row[column]);
            const order = compareKeys(a.sortKey, b.sortKey);
            return (this.sort.descending ? -order : order) || a.id - b.id;
          }

          // Where `entry` is, or goes, in the sorted view.
          sortedPosition(entry) {
            let low = 0, high = this.view.length;
            while (low < high) {
              const middle = (low + high) >> 1;
              if (this.compare(this.view[middle], entry) < 0) low = middle + 1; else high = middle;
            }
            return low;
          }

          leaveView(entry) {
            if (!entry.inView) return;
            let index = this.sortedPosition(entry);
            if (this.view[index] !== entry) index = this.view.indexOf(entry);
            if (index >= 0) this.view.splice(index, 1);
            entry.inView = false;
          }

          enterView(entry) {
            if (!this.matches(entry)) return;
            this.view.splice(this.sortedPosition(entry), 0, entry);
            entry.inView = true;
          }

          rebuildView() {
            if (!this.sort && !this.filter) {
              this.view = this.entries;
              return;
            }
            const view = this.filter ? this.entries.filter(entry => this.matches(entry)) : this.entries.slice();
            if (this.sort) {
              for (const entry of this.entries) entry.inView = false;
              view.sort((a, b) => this.compare(a, b));
              for (const entry of view) entry.inView = true;
            }
            this.view = view;
          }

          setFilter(text) {
            this.filter = text.trim().toLowerCase();
            this.recent = [];
            this.rebuildView();
            this.showCount();
            this.render();
          }

          toggleSort(column) {
            const current = this.sort;
            if (!current || current.column !== column) this.sort = { column, descending: false };
            else if (!current.descending) this.sort = { column, descending: true };
            else this.sort = null;
            for (const entry of this.entries) entry.sortKey = undefined;
            [...this.thead.rows[0].cells].forEach((th, index) => {
              if (this.sort && this.sort.column === index) th.setAttribute("aria-sort", this.sort.descending ? "descending" : "ascending");
              else th.removeAttribute("aria-sort");
            });
            this.recent = [];
            this.rebuildView();
            this.showCount();
            this.render();
          }

          // MARK: drawing the rows in view

          scheduleRender() {
            if (this.renderScheduled) return;
            this.renderScheduled = true;
            requestAnimationFrame(() => { this.renderScheduled = false; this.render(); });
          }

          // The positions of the rows in view. With `generous`, as if the table
          // were as tall as the window: before the first rows, it is empty.
          visibleRange(generous) {
            const header = this.thead.offsetHeight;
            const top = this.wrap.scrollTop;
            const height = generous ? Math.max(this.wrap.clientHeight, window.innerHeight) : this.wrap.clientHeight;
            const first = Math.max(0, Math.floor(top / rowHeight));
            const last = Math.min(this.view.length, Math.ceil((top + height - header) / rowHeight));
            return [first, Math.max(first, last)];
          }

          // Puts the rows around the viewport in the table, moving as few as can
          // be: a row moved in the document restarts its animations. Rows that
          // keep their relative order stay; the others, and new rows, go before
          // their next row. With `slides`, rows drawn before and after that
          // changed position slide from where they were.
          render(slides) {
            const [firstVisible, lastVisible] = this.visibleRange(true);
            const first = Math.max(0, firstVisible - overscan);
            const last = Math.min(this.view.length, lastVisible + overscan);
            const wanted = this.view.slice(first, last);
            const before = new Map();
            if (slides) this.drawn.forEach((entry, index) => before.set(entry, this.drawnFirst + index));
            const keep = new Set(wanted);
            for (const entry of this.drawn) {
              if (!keep.has(entry) && entry.tr) { entry.tr.remove(); entry.tr = null; }
            }
            for (const entry of wanted) if (!entry.tr) entry.tr = this.makeRow(entry);
            const places = new Map();
            let place = 0;
            for (let node = this.tbody.firstChild; node; node = node.nextSibling) places.set(node, place++);
            const stays = increasingRun(wanted.map(entry => places.has(entry.tr) ? places.get(entry.tr) : -1));
            let next = this.spacerBelow;
            for (let index = wanted.length - 1; index >= 0; index--) {
              const tr = wanted[index].tr;
              if (!stays.has(index)) this.tbody.insertBefore(tr, next);
              next = tr;
            }
            this.spacerAbove.firstChild.style.height = first * rowHeight + "px";
            this.spacerBelow.firstChild.style.height = (this.view.length - last) * rowHeight + "px";
            this.drawn = wanted;
            this.drawnFirst = first;
            this.tbody.dataset.first = String(first);
            if (slides) {
              // Every sliding row starts where it was, then, after one layout for
              // them all, moves to its place.
              const height = this.wrap.clientHeight;
              const sliding = [];
              wanted.forEach((entry, index) => {
                if (!before.has(entry)) return;
                const offset = (before.get(entry) - (first + index)) * rowHeight;
                if (offset === 0 || Math.abs(offset) > height) return;
                entry.tr.classList.remove("moving");
                entry.tr.style.transform = "translateY(" + offset + "px)";
                sliding.push(entry.tr);
              });
              if (sliding.length > 0) {
                void this.tbody.offsetHeight;
                for (const tr of sliding) {
                  tr.classList.add("moving");
                  tr.style.transform = "";
                }
              }
            }
            this.showChangeButtons(...this.visibleRange(false));
          }

          makeRow(entry) {
            const tr = element("tr", "row");
            tr.dataset.key = entry.key;
            this.columns.forEach((column, index) => {
              const td = element("td");
              this.fillCell(td, entry.row[column], index);
              tr.appendChild(td);
            });
            const flash = entry.flash;
            const elapsed = flash ? performance.now() - flash.at : Infinity;
            if (elapsed < flashDuration) {
              // A row drawn while its change is recent shows the rest of its
              // highlight, as if it had been in view.
              if (flash.kind === "inserted") {
                tr.classList.add("inserted");
                tr.style.animationDelay = -elapsed + "ms";
              } else {
                this.showUpdate(entry, tr, elapsed);
              }
            }
            return tr;
          }

          fillCell(td, value, index) {
            td.dataset.value = JSON.stringify(value === undefined ? null : value);
            td.className = value === null || value === undefined ? "null" : isNumeric(value) || this.numeric[index] ? "number" : "";
            td.textContent = valueText(value);
          }

          // An updated row: its new values, and for the changed cells the old
          // value struck through, for what remains of the highlight.
          showUpdate(entry, tr = entry.tr, elapsed = 0) {
            tr.dataset.key = entry.key;
            const previous = entry.flash ? entry.flash.previous || {} : {};
            this.columns.forEach((column, index) => {
              const td = tr.cells[index];
              if (!td) return;
              this.fillCell(td, entry.row[column], index);
              if (!(column in previous)) return;
              const old = element("span", "old", valueText(previous[column]));
              const arrow = element("span", "arrow", "→");
              td.prepend(old, arrow);
              td.classList.remove("changed");
              td.style.animationDelay = -elapsed + "ms";
              if (elapsed === 0) td.getBoundingClientRect();
              td.classList.add("changed");
              setTimeout(() => { if (td.firstChild === old) { old.remove(); arrow.remove(); } }, flashDuration - elapsed);
            });
          }

          // MARK: changes out of view

          // The positions in the view of the latest change's rows.
          locateRecent(recent) {
            this.recent = [];
            if (recent.size === 0) return;
            if (recent.size <= 64) {
              for (const entry of recent) {
                const index = this.view.indexOf(entry);
                if (index >= 0) this.recent.push(index);
              }
              this.recent.sort((a, b) => a - b);
              return;
            }
            this.view.forEach((entry, index) => { if (recent.has(entry)) this.recent.push(index); });
          }

          // Buttons for the changed rows above and below the viewport; rows that
          // came into view count as seen.
          showChangeButtons(first, last) {
            this.recent = this.recent.filter(position => position < first || position >= last);
            const above = this.recent.filter(position => position < first).length;
            const below = this.recent.length - above;
            this.above.hidden = above === 0;
            this.below.hidden = below === 0;
            this.above.textContent = "↑ " + above + (above === 1 ? " changed row" : " changed rows") + " above";
            this.below.textContent = "↓ " + below + (below === 1 ? " changed row" : " changed rows") + " below";
          }

          // Scrolls to the nearest changed row above (-1) or below (1) the viewport.
          scrollToChange(direction) {
            const [first, last] = this.visibleRange();
            const candidates = this.recent.filter(position => direction < 0 ? position < first : position >= last);
            if (candidates.length === 0) return;
            const position = direction < 0 ? Math.max(...candidates) : Math.min(...candidates);
            const entry = this.view[position];
            this.wrap.scrollTop = Math.max(0, position * rowHeight - this.wrap.clientHeight / 3);
            this.render();
            if (entry && entry.tr) {
              const tr = entry.tr;
              tr.classList.add("found");
              setTimeout(() => tr.classList.remove("found"), 1500);
            }
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

          schedulePlane() {
            if (!this.coordinates || this.planeScheduled) return;
            this.planeScheduled = true;
            requestAnimationFrame(() => { this.planeScheduled = false; this.drawPoints(); });
          }

          // Every row with finite coordinates is a point, scaled to the frame:
          // an element each (animated) up to `manyPoints`, dots on a canvas above.
          drawPoints() {
            if (!this.coordinates) return;
            const { x, y } = this.coordinates;
            const number = value => typeof value === "number" ? value : Number(value);
            const placed = [];
            let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
            for (const entry of this.entries) {
              const valueX = number(entry.row[x]), valueY = number(entry.row[y]);
              if (!Number.isFinite(valueX) || !Number.isFinite(valueY)) { this.removePoint(entry, true); continue; }
              placed.push(entry);
              if (valueX < minX) minX = valueX;
              if (valueX > maxX) maxX = valueX;
              if (valueY < minY) minY = valueY;
              if (valueY > maxY) maxY = valueY;
            }
            const spanX = maxX - minX || 1, spanY = maxY - minY || 1;
            const left = entry => 30 + (number(entry.row[x]) - minX) / spanX * 360;
            const top = entry => 290 - (number(entry.row[y]) - minY) / spanY * 260;
            const label = this.columns.find(column => ["name", "title", "label"].includes(column.toLowerCase()));
            this.labelColumn = label;
            this.plane.dataset.points = String(placed.length);
            if (placed.length > manyPoints) {
              for (const entry of placed) this.removePoint(entry, false);
              this.svg.style.display = "none";
              this.canvas.hidden = false;
              const context = this.canvas.getContext("2d");
              context.clearRect(0, 0, 420, 320);
              context.fillStyle = getComputedStyle(this.plane).getPropertyValue("--accent").trim() || "#2f6fdf";
              // Positions in typed arrays: no object per point at each change.
              const count = placed.length;
              if (!this.placedX || this.placedX.length < count) {
                this.placedX = new Float32Array(count * 2);
                this.placedY = new Float32Array(count * 2);
              }
              for (let index = 0; index < count; index++) {
                const pointX = left(placed[index]), pointY = top(placed[index]);
                this.placedX[index] = pointX;
                this.placedY[index] = pointY;
                context.fillRect(pointX - 1, pointY - 1, 2, 2);
              }
              this.placed = placed;
              return;
            }
            this.placed = null;
            this.svg.style.display = "";
            this.canvas.hidden = true;
            this.plane.classList.toggle("labelled", placed.length <= fewPoints);
            for (const entry of placed) {
              if (!entry.point) {
                entry.point = document.createElementNS("http://www.w3.org/2000/svg", "g");
                entry.point.setAttribute("class", "point added");
                const circle = document.createElementNS("http://www.w3.org/2000/svg", "circle");
                circle.setAttribute("r", "6");
                const text = document.createElementNS("http://www.w3.org/2000/svg", "text");
                const title = document.createElementNS("http://www.w3.org/2000/svg", "title");
                entry.point.append(circle, text, title);
                this.svg.appendChild(entry.point);
              }
              const pointX = left(entry), pointY = top(entry);
              entry.point.dataset.key = entry.key;
              entry.point.dataset.x = JSON.stringify(entry.row[x]);
              entry.point.dataset.y = JSON.stringify(entry.row[y]);
              const text = entry.point.children[1];
              text.textContent = label ? valueText(entry.row[label]) : "";
              entry.point.children[2].textContent = label ? valueText(entry.row[label]) : entry.key;
              // Labels stay inside the frame: on the left of points near the
              // right edge, below points near the top.
              const onLeft = pointX > 280;
              text.setAttribute("x", onLeft ? "-9" : "9");
              text.setAttribute("text-anchor", onLeft ? "end" : "start");
              text.setAttribute("y", pointY < 16 ? "16" : "4");
              entry.point.style.transform = "translate(" + pointX.toFixed(1) + "px, " + pointY.toFixed(1) + "px)";
              const point = entry.point;
              setTimeout(() => point.classList.remove("added", "updated"), 1000);
            }
          }

          // On the canvas: the label of the point nearest the pointer.
          showTip(event) {
            if (!this.placed || this.placed.length === 0) return;
            const bounds = this.canvas.getBoundingClientRect();
            const pointerX = (event.clientX - bounds.left) * 420 / bounds.width;
            const pointerY = (event.clientY - bounds.top) * 320 / bounds.height;
            let nearest = -1, distance = 64;
            for (let index = 0; index < this.placed.length; index++) {
              const d = (this.placedX[index] - pointerX) ** 2 + (this.placedY[index] - pointerY) ** 2;
              if (d < distance) { distance = d; nearest = index; }
            }
            if (nearest < 0) { this.tip.hidden = true; return; }
            const entry = this.placed[nearest];
            this.tip.textContent = this.labelColumn ? valueText(entry.row[this.labelColumn]) : entry.key;
            this.tip.hidden = false;
            this.tip.style.left = Math.min(this.placedX[nearest] + 8, 420 - this.tip.offsetWidth - 4) + "px";
            this.tip.style.top = Math.max(this.placedY[nearest] - 24, 4) + "px";
          }
        }

        const container = document.getElementById("panels");
        configuration.panels.forEach((settings, index) => panels.push(new Panel(index, settings, container)));
        updateStatus();
        """#
}
#endif
