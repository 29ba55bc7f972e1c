// The graph view's page script: shows the SVG from `mirdsl/graph`, pans (drag),
// zooms (wheel, buttons), collapses clusters (click their title), and asks the
// extension to reveal a node's source (click a node). State survives redraws.
(function () {
  const vscode = acquireVsCodeApi();
  const viewport = document.getElementById('viewport');
  const canvas = document.getElementById('canvas');
  const status = document.getElementById('status');
  const saved = vscode.getState() || {};
  let view = saved.view || { x: 0, y: 0, k: 1 };
  let collapsed = new Set(saved.collapsed || []);
  let fitted = !!saved.view;
  let selected = null;

  function persist() { vscode.setState({ view, collapsed: [...collapsed] }); }
  function apply() {
    canvas.style.transform = `translate(${view.x}px, ${view.y}px) scale(${view.k})`;
    persist();
  }
  function svg() { return canvas.querySelector('svg'); }
  function fit() {
    const s = svg();
    if (!s) return;
    const w = parseFloat(s.getAttribute('width')) || s.getBBox().width;
    const h = parseFloat(s.getAttribute('height')) || s.getBBox().height;
    const vw = viewport.clientWidth, vh = viewport.clientHeight;
    const k = Math.min(1.5, Math.max(0.05, Math.min((vw - 16) / w, (vh - 16) / h)));
    view = { k, x: (vw - w * k) / 2, y: Math.max(8, (vh - h * k) / 2) };
    apply();
  }
  function zoomAt(factor, cx, cy) {
    const k = Math.min(8, Math.max(0.05, view.k * factor));
    const f = k / view.k;
    view = { k, x: cx - (cx - view.x) * f, y: cy - (cy - view.y) * f };
    apply();
  }

  // Clusters: collapsing hides the body, shrinks the box to its title, and hides
  // the edges that reach into it.
  function applyCollapsed() {
    const s = svg();
    if (!s) return;
    for (const c of s.querySelectorAll('g.cluster')) {
      const on = collapsed.has(c.getAttribute('data-graph'));
      c.classList.toggle('collapsed', on);
      const box = c.querySelector(':scope > rect.cluster-box');
      if (box) box.setAttribute('height', on ? '24' : box.getAttribute('data-height'));
    }
    for (const e of s.querySelectorAll('g.edge')) {
      const hidden = ['data-from', 'data-to'].some((a) => {
        const id = e.getAttribute(a) || '';
        const el = id.startsWith('cluster:')
          ? s.querySelector(`g.cluster[data-graph="${CSS.escape(id.slice(8))}"]`)?.parentElement
          : s.querySelector(`[data-node="${CSS.escape(id)}"]`);
        return !!(el && el.closest('g.cluster.collapsed'));
      });
      e.classList.toggle('hidden', hidden && !e.closest('g.cluster.collapsed'));
    }
  }

  function show(msg) {
    if (msg.type === 'error') {
      status.textContent = msg.message;
      status.classList.add('error');
      return;
    }
    status.classList.remove('error');
    if (msg.type === 'dot') {
      canvas.innerHTML = '';
      const pre = document.createElement('pre');
      pre.textContent = msg.dot;
      canvas.appendChild(pre);
      status.textContent = 'no SVG from the server: showing DOT';
    } else {
      // The SVG comes from our own server; parse it as XML and adopt the root.
      const doc = new DOMParser().parseFromString(msg.svg, 'image/svg+xml');
      const root = doc.documentElement;
      if (root.nodeName !== 'svg') {
        status.textContent = 'the server sent a drawing that is not SVG';
        status.classList.add('error');
        return;
      }
      canvas.innerHTML = '';
      canvas.appendChild(document.importNode(root, true));
      applyCollapsed();
      if (selected) svg().querySelector(`[data-node="${CSS.escape(selected)}"]`)?.classList.add('selected');
      const n = svg().querySelectorAll('[data-node]').length;
      status.textContent = `${msg.graph}: ${n} nodes`;
      if (!fitted) { fit(); fitted = true; }
      document.body.setAttribute('data-version', String(msg.version));
      vscode.postMessage({ type: 'rendered', version: msg.version, nodes: n });
    }
  }

  window.addEventListener('message', (ev) => show(ev.data));

  let drag = null;
  viewport.addEventListener('mousedown', (ev) => {
    if (ev.button !== 0 || ev.target.closest('[data-node], .cluster-label')) return;
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false };
    viewport.classList.add('panning');
  });
  window.addEventListener('mousemove', (ev) => {
    if (!drag) return;
    view.x = drag.vx + ev.clientX - drag.x;
    view.y = drag.vy + ev.clientY - drag.y;
    drag.moved = true;
    apply();
  });
  window.addEventListener('mouseup', () => { drag = null; viewport.classList.remove('panning'); });
  viewport.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = viewport.getBoundingClientRect();
    zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  canvas.addEventListener('click', (ev) => {
    const label = ev.target.closest('.cluster-label');
    if (label) {
      const name = label.parentElement.getAttribute('data-graph');
      if (collapsed.has(name)) collapsed.delete(name); else collapsed.add(name);
      applyCollapsed();
      persist();
      return;
    }
    const node = ev.target.closest('[data-node]');
    if (node) {
      svg().querySelectorAll('.node.selected').forEach((n) => n.classList.remove('selected'));
      node.classList.add('selected');
      selected = node.getAttribute('data-node');
      vscode.postMessage({ type: 'reveal', node: selected });
    }
  });
  document.getElementById('fit').addEventListener('click', fit);
  document.getElementById('reset').addEventListener('click', () => { view = { x: 8, y: 8, k: 1 }; apply(); });
  document.getElementById('zoom-in').addEventListener('click', () => zoomAt(1.25, viewport.clientWidth / 2, viewport.clientHeight / 2));
  document.getElementById('zoom-out').addEventListener('click', () => zoomAt(0.8, viewport.clientWidth / 2, viewport.clientHeight / 2));
  document.getElementById('expand').addEventListener('click', () => { collapsed.clear(); applyCollapsed(); persist(); });
  apply();
  vscode.postMessage({ type: 'ready' });
})();
