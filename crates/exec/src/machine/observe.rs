//! Watching a run statement by statement (a debugger's hook).
//!
//! An [`Observer`] set with [`Executor::set_observer`] is called before every
//! step of the interpreter, before each graph returns, and after each step
//! that stored a result. It sees the call stack ([`Frames`]): every frame's
//! graph, the node it is at and the values of its parameters, the CNodes
//! computed so far and its captures, and the weights. It may block (a
//! debugger waiting at a breakpoint) and may end the run by returning an
//! error.
//!
//! While an observer is set, values are kept until their frame returns (so a
//! debugger can show them) and graph calls run in the interpreter, never as
//! compiled plans (so every statement is seen). Neither changes a result:
//! the same kernels run on the same values in the same order. Without an
//! observer the run pays one branch per step.

use std::sync::Arc;

use ir::{Body, GraphId, NodeId};

use super::{Executor, Frame, Item};
use crate::error::RunError;
use crate::value::Value;

/// Called by the interpreter as it runs (see the module's documentation).
pub trait Observer: Send {
    /// Before the innermost frame's current node runs, or, when
    /// [`Frames::returning`], before it returns its output.
    fn before(&mut self, frames: &Frames<'_>) -> Result<(), RunError>;
    /// After the innermost frame's current node stored its result (a
    /// primitive or structural step; a graph call's result is stored when the
    /// callee returns). `writes` are the weights (by index, as
    /// [`Frames::weight`]) the step wrote.
    fn after(&mut self, frames: &Frames<'_>, writes: &[u32]) -> Result<(), RunError>;
    /// A fault ends the run: called with the stack as it was when the
    /// innermost frame's current node failed, before it is unwound.
    fn fault(&mut self, frames: &Frames<'_>, error: &RunError) {
        let _ = (frames, error);
    }
}

/// The call stack and weights as an [`Observer`] sees them.
pub struct Frames<'a> {
    pub(super) ex: &'a Executor,
    pub(super) stack: &'a [Frame],
    pub(super) returning: bool,
}

/// One graph call in progress.
pub struct FrameView<'a> {
    item: &'a Item,
    frame: &'a Frame,
    node: Option<NodeId>,
}

impl<'a> Frames<'a> {
    /// The number of frames.
    pub fn len(&self) -> usize {
        self.stack.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// Whether the innermost frame is about to return.
    pub fn returning(&self) -> bool {
        self.returning
    }

    /// Frame `i`, 0 being the innermost.
    pub fn frame(&self, i: usize) -> Option<FrameView<'a>> {
        let k = self.stack.len().checked_sub(i + 1)?;
        let frame = &self.stack[k];
        let item = &self.ex.items[frame.item as usize];
        let node = if i == 0 && self.returning {
            item.body.graph(frame.plan.graph).output
        } else {
            frame
                .pc
                .checked_sub(1)
                .and_then(|pc| frame.plan.steps.get(pc))
                .map(|s| s.node)
        };
        Some(FrameView { item, frame, node })
    }

    /// The number of weights.
    pub fn weight_count(&self) -> usize {
        self.ex.weights.len()
    }

    /// Weight `w`'s declaration.
    pub fn weight_def(&self, w: u32) -> Option<&'a ir::WeightDef> {
        self.ex.weights.get(w as usize)
    }

    /// The folder `load("...")` initialisers read from.
    pub fn base_dir(&self) -> &'a std::path::Path {
        &self.ex.options.base_dir
    }

    /// Weight `w`'s name and current value (`None` until first used).
    pub fn weight(&self, w: u32) -> Option<(&'a str, Option<&'a Value>)> {
        let def = self.ex.weights.get(w as usize)?;
        Some((
            def.name.as_str(),
            self.ex.weight_values[w as usize].as_ref(),
        ))
    }
}

impl<'a> FrameView<'a> {
    /// The top-level graph's body this frame's graph belongs to.
    pub fn body(&self) -> &'a Arc<Body> {
        &self.item.body
    }

    /// The name of the top-level graph (an item) the frame's graph is in.
    pub fn item_name(&self) -> &'a str {
        &self.item.name
    }

    /// The frame's graph in [`FrameView::body`].
    pub fn graph(&self) -> GraphId {
        self.frame.plan.graph
    }

    /// The graph's name.
    pub fn name(&self) -> &'a str {
        &self.frame.plan.name
    }

    /// The node the frame is at: the innermost frame's current step (or
    /// output when returning), a caller's call in progress.
    pub fn node(&self) -> Option<NodeId> {
        self.node
    }

    /// The value of `node` if the frame holds it: a parameter, a CNode
    /// computed so far, or a captured value.
    pub fn value(&self, node: NodeId) -> Option<&'a Value> {
        let g = self.item.body.graph(self.frame.plan.graph);
        if let Some(i) = g.params.iter().position(|&p| p == node) {
            return self.frame.slots.get(i)?.as_ref();
        }
        if let Some(s) = self.frame.plan.steps.iter().find(|s| s.node == node) {
            return self.frame.slots[s.slot as usize].as_ref();
        }
        let info = self.item.info.as_ref()?;
        let i = *info
            .env_index
            .get(self.frame.plan.graph.0 as usize)?
            .get(&node)?;
        self.frame.env.get(i as usize)
    }

    /// Every value the frame holds, parameters first, then captures, then
    /// the CNodes computed so far in source order.
    pub fn values(&self) -> Vec<(NodeId, &'a Value)> {
        let g = self.item.body.graph(self.frame.plan.graph);
        let mut out = Vec::new();
        for (i, &p) in g.params.iter().enumerate() {
            if let Some(Some(v)) = self.frame.slots.get(i) {
                out.push((p, v));
            }
        }
        if let Some(info) = &self.item.info {
            if let Some(env) = info.env.get(self.frame.plan.graph.0 as usize) {
                for (i, &n) in env.iter().enumerate() {
                    if let Some(v) = self.frame.env.get(i) {
                        out.push((n, v));
                    }
                }
            }
        }
        for s in &self.frame.plan.steps {
            if let Some(v) = &self.frame.slots[s.slot as usize] {
                out.push((s.node, v));
            }
        }
        out
    }
}

impl Executor {
    /// Sets (or clears) the observer called as the interpreter runs.
    pub fn set_observer(&mut self, observer: Option<Box<dyn Observer>>) {
        self.observer = observer;
    }

    /// Whether an observer is set.
    pub fn observed(&self) -> bool {
        self.observer.is_some()
    }

    /// Calls the observer's `before` (`returning`: before the innermost frame returns).
    pub(super) fn observe_before(
        &mut self,
        stack: &[Frame],
        returning: bool,
    ) -> Result<(), RunError> {
        let Some(mut obs) = self.observer.take() else {
            return Ok(());
        };
        let r = obs.before(&Frames {
            ex: self,
            stack,
            returning,
        });
        self.observer = Some(obs);
        r
    }

    /// Calls the observer's `fault`.
    pub(super) fn observe_fault(&mut self, stack: &[Frame], error: &RunError) {
        let Some(mut obs) = self.observer.take() else {
            return;
        };
        obs.fault(
            &Frames {
                ex: self,
                stack,
                returning: false,
            },
            error,
        );
        self.observer = Some(obs);
    }

    /// Calls the observer's `after`.
    pub(super) fn observe_after(
        &mut self,
        stack: &[Frame],
        writes: &[u32],
    ) -> Result<(), RunError> {
        let Some(mut obs) = self.observer.take() else {
            return Ok(());
        };
        let r = obs.after(
            &Frames {
                ex: self,
                stack,
                returning: false,
            },
            writes,
        );
        self.observer = Some(obs);
        r
    }
}
