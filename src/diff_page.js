/* The page of `gerewrite diff --html` (src/diff_page.c): selecting an op
 * highlights its partners on the other side and shows both.  The data
 * block lists each side's ops as [name, type, status, node, partners,
 * attrs, change]; nodes maps an SVG node's title to the ops it draws. */
(function () {
	"use strict";
	var status = document.getElementById("gd-status");
	var failed = false;
	window.onerror = function (msg) {
		failed = true;
		status.textContent = "error: " + msg;
		status.className = "bad";
	};
	var D = JSON.parse(document.getElementById("gd-data").textContent);
	var other = {a: "b", b: "a"};
	/* --verify: the runner's figures, per output and per tensor */
	var V = null, byOp = {};
	var vd = document.getElementById("gd-verify-data");
	if (vd)
		V = JSON.parse(vd.textContent);
	function fig(x) {
		return x === null || x === undefined ? "-" : Number(x).toPrecision(3);
	}
	var elems = {a: {}, b: {}};
	var chosen = [];

	function text(tag, s, cls) {
		var e = document.createElement(tag);
		e.textContent = s;
		if (cls)
			e.className = cls;
		return e;
	}

	function clear() {
		chosen.forEach(function (e) {
			e.classList.remove("gd-sel", "gd-partner", "gd-row-sel");
		});
		chosen = [];
	}

	function mark(e, cls) {
		if (e) {
			e.classList.add(cls);
			chosen.push(e);
		}
	}

	function opBox(side, i, partner) {
		var op = D[side].ops[i];
		var box = document.createElement("div");
		box.className = "gd-op" + (partner ? " gd-the-partner" : "");
		box.appendChild(text("h2", (side === "a" ? "A: " : "B: ") + op[0]));
		box.appendChild(text("div", op[1] + (op[2] ? " (" + op[2] + ")" : "")));
		if (op[6])
			box.appendChild(text("div", op[6], "gd-change"));
		var t = document.createElement("table");
		op[5].forEach(function (kv) {
			var tr = document.createElement("tr");
			tr.appendChild(text("th", kv[0]));
			tr.appendChild(text("td", kv[1]));
			t.appendChild(tr);
		});
		box.appendChild(t);
		(byOp[op[0]] || []).forEach(function (e) {
			box.appendChild(text("div", "output " + e[0] + ": max abs " +
				fig(e[1]) + ", max rel " + fig(e[2]) +
				(e[3] ? " (within tolerance)" : " (outside tolerance)"),
				e[3] ? "" : "gd-change"));
		});
		return box;
	}

	/* Scrolls the picture of side so that node e is in its middle. */
	function center(side, e) {
		if (!e)
			return;
		var pane = document.getElementById("gd-svg-" + side);
		var p = pane.getBoundingClientRect(), r = e.getBoundingClientRect();
		pane.scrollTop += r.top - p.top - (pane.clientHeight - r.height) / 2;
		pane.scrollLeft += r.left - p.left - (pane.clientWidth - r.width) / 2;
	}

	/* Selects op i of side: its node, its partners' nodes, the details. */
	function selectOp(side, i) {
		clear();
		var op = D[side].ops[i], o = other[side];
		var me = elems[side][op[3]];
		mark(me, "gd-sel");
		center(side, me);
		var det = document.getElementById("gd-details");
		det.textContent = "";
		det.appendChild(opBox(side, i, false));
		op[4].forEach(function (p) {
			var node = elems[o][D[o].ops[p][3]];
			mark(node, "gd-partner");
			center(o, node);
			det.appendChild(opBox(o, p, true));
		});
		var row = document.querySelector('#gd-entries tr[data-side="' +
			side + '"][data-op="' + i + '"]');
		mark(row, "gd-row-sel");
	}

	/* A node of a picture: the first op it draws (a collapsed scope
	 * draws many; the first with a status, else the first). */
	function selectNode(side, title) {
		var ops = D[side].nodes[title] || [];
		var pick = ops[0];
		ops.forEach(function (i) {
			if (D[side].ops[i][2] && !D[side].ops[pick][2])
				pick = i;
		});
		if (pick !== undefined)
			selectOp(side, pick);
	}

	/* the runner's figures: a table of outputs, a line per-op, and per
	 * op its tensors (shown when it is selected) */
	function showVerify() {
		var sec = document.getElementById("gd-verify");
		sec.appendChild(text("h2", "Run on seeded inputs (--verify): " +
			(V.ok ? "outputs within tolerance" : "outputs differ")));
		var t = document.createElement("table");
		var head = document.createElement("tr");
		["output", "A", "B", "max abs", "max rel", ""].forEach(function (h) {
			head.appendChild(text("th", h));
		});
		t.appendChild(head);
		(V.outputs || []).forEach(function (o) {
			var tr = document.createElement("tr");
			[o.name, o.a, o.b, fig(o.max_abs_diff), fig(o.max_rel_diff),
			 o.ok ? "ok" : (o.note || "differs")].forEach(function (c) {
				tr.appendChild(text("td", c));
			});
			t.appendChild(tr);
		});
		sec.appendChild(t);
		var po = V.per_op;
		if (po)
			sec.appendChild(text("div", po.compared + " tensors of the " +
				"same name compared, " + po.outside + " outside tolerance" +
				(po.first ? "; the first in B's order: " + po.first.tensor +
					" (" + (po.first.type || "") + ")" : "")));
		(V.tensors || []).forEach(function (e) {
			var i = e[0].lastIndexOf(":");
			var name = i < 0 ? e[0] : e[0].slice(0, i);
			(byOp[name] = byOp[name] || []).push(
				[i < 0 ? "0" : e[0].slice(i + 1), e[1], e[2], e[3]]);
		});
	}
	if (V)
		showVerify();

	/* functions, collections, signatures, checkpoint entries: a line
	 * each, as the command prints them */
	var md = document.getElementById("gd-more-data");
	var M = md ? JSON.parse(md.textContent) : null;
	var signs = {removed: "- ", added: "+ ", changed: "~ ", moved: "> "};
	function moreLine(what, e) {
		var s = signs[e.kind] + what + " " + e.name;
		if (e.ops)
			s += " (" + e.ops.length + " ops of its body differ)";
		if (e.added || e.removed)
			s += ": " + e.removed.map(function (x) { return "-" + x; })
				.concat(e.added.map(function (x) { return "+" + x; }))
				.join(", ");
		if (e.changes)
			s += ": " + e.changes.map(function (c) {
				return c.port + " " + c.key + ": " + c.change;
			}).join("; ");
		if (e.type)
			s += " (" + e.type + (e.max_abs_diff !== undefined ?
				", largest absolute difference " + fig(e.max_abs_diff) : "") + ")";
		return s;
	}
	if (M) {
		var lines = [];
		[["functions", "function"], ["collections", "collection"],
		 ["signatures", "signature"], ["checkpoint", "checkpoint"]]
			.forEach(function (w) {
				(M[w[0]] || []).forEach(function (e) {
					lines.push(moreLine(w[1], e));
				});
			});
		if (lines.length)
			document.getElementById("gd-more").appendChild(
				text("pre", lines.join("\n")));
	}

	var marked = [];
	["a", "b"].forEach(function (side) {
		var gs = document.querySelectorAll("#gd-svg-" + side + " g.node");
		for (var k = 0; k < gs.length; k++) {
			var t = gs[k].querySelector("title");
			var title = t ? t.textContent : "";
			if (!D[side].nodes[title])
				continue;
			elems[side][title] = gs[k];
			D[side].nodes[title].forEach(function (i) {
				var op = D[side].ops[i];
				if (op[2] && title.charAt(0) === "n") {
					gs[k].classList.add("gd-" + op[2]);
					marked.push(side + " " + op[2] + " " + op[0]);
				}
			});
		}
	});
	document.getElementById("gd-marked").textContent = marked.join("\n");
	/* the pairs of a highlighted op of B: "b-name <- a-name" a line */
	var pairs = [];
	D.b.ops.forEach(function (op) {
		if (op[2] && elems.b[op[3]])
			op[4].forEach(function (p) {
				pairs.push(op[0] + " <- " + D.a.ops[p][0]);
			});
	});
	document.getElementById("gd-pairs").textContent = pairs.join("\n");
	/* one listener for each picture and one for the table */
	["a", "b"].forEach(function (side) {
		document.getElementById("gd-svg-" + side).addEventListener("click",
			function (ev) {
				var g = ev.target.closest("g.node");
				var t = g && g.querySelector("title");
				if (t)
					selectNode(side, t.textContent);
			});
	});
	document.getElementById("gd-entries").addEventListener("click",
		function (ev) {
			var tr = ev.target.closest("tr[data-op]");
			if (tr)
				selectOp(tr.getAttribute("data-side"),
					 +tr.getAttribute("data-op"));
		});

	/* a picture is shrunk to its pane's width, but to no less than half
	 * its size; its title toggles full size */
	["a", "b"].forEach(function (side) {
		var pane = document.getElementById("gd-svg-" + side);
		var svg = pane.querySelector("svg");
		if (!svg)
			return;
		var r = svg.getBoundingClientRect(), full = true;
		var k = Math.max(0.5, Math.min(1, (pane.clientWidth - 4) / r.width));
		function size() {
			var f = full ? 1 : k;
			svg.style.width = Math.round(r.width * f) + "px";
			svg.style.height = Math.round(r.height * f) + "px";
			full = !full;
		}
		size();
		pane.previousSibling.title = "click: full size / fitted";
		pane.previousSibling.addEventListener("click", size);
	});

	/* #selftest: click the first op of B that differs and has a partner
	 * drawn; its partner must be highlighted and shown */
	function selftest() {
		var ops = D.b.ops;
		for (var i = 0; i < ops.length; i++) {
			if (!elems.b[ops[i][3]] || !ops[i][4].length || !ops[i][2])
				continue;
			/* a click, as a reader's, through the picture's listener */
			elems.b[ops[i][3]].dispatchEvent(new MouseEvent("click",
				{bubbles: true}));
			var p = D.a.ops[ops[i][4][0]];
			var e = elems.a[p[3]];
			if (!e || !e.classList.contains("gd-partner"))
				throw new Error("partner of " + ops[i][0] + " not highlighted");
			if (document.getElementById("gd-details").textContent
				.indexOf(p[0]) < 0)
				throw new Error("partner of " + ops[i][0] + " not shown");
			return " selftest " + ops[i][0] + " -> " + p[0];
		}
		return " selftest: no pair";
	}
	/* #a=NAME, #b=NAME: select that op of A or B (a link to it) */
	function selectNamed(h) {
		var side = h.charAt(1), name = decodeURIComponent(h.slice(3));
		D[side].ops.forEach(function (op, i) {
			if (op[0] === name)
				selectOp(side, i);
		});
		return "";
	}
	var h = location.hash, said = "";
	if (h === "#selftest")
		said = selftest();
	else if (/^#[ab]=/.test(h))
		said = selectNamed(h);
	if (!failed) {
		status.textContent = "ok" + said + " (" +
			Math.round(performance.now()) + " ms)";
	}
})();
