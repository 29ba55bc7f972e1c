//! `jacfwd`, `jacrev` and `hessian` (spec §7), JAX's convention: the
//! Jacobian of `f`'s output with respect to a parameter is shaped
//! `out.shape + x.shape`; a tuple output gives a tuple, and `wrt=(i, j)` a
//! tuple per output element.
//!
//! - `jacrev(f)(x...)` is `vjp(f)(x...)`'s backpropagator applied to every
//!   one-hot sensitivity of the output (one row of the Jacobian each),
//!   stacked and reshaped;
//! - `jacfwd(f)(x...)` is `jvp(f)` along every one-hot tangent of `x` (one
//!   column each), stacked on a last axis and reshaped;
//! - `hessian(f, wrt)` is `jacfwd(jacrev(f, wrt), wrt)`.
//!
//! The shapes must be known (they are, for a call at run time and for
//! annotated parameters): the rows and columns are unrolled.

use std::sync::Arc;

use ir::{AttrValue, DType, ScalarConst};
use tensor::Tensor;

use super::*;

/// A tensor or scalar leaf of a value, by its path of tuple indices.
struct Leaf {
    path: Vec<usize>,
    dtype: DType,
    dims: Vec<i64>,
    scalar: bool,
}

fn leaves(
    v: &AbsVal,
    path: &mut Vec<usize>,
    out: &mut Vec<Leaf>,
    what: &str,
) -> Result<(), AdError> {
    match v {
        AbsVal::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i);
                leaves(item, path, out, what)?;
                path.pop();
            }
            Ok(())
        }
        AbsVal::Tensor { dtype, .. } | AbsVal::Scalar { dtype, .. } if dtype.is_float() => {
            let dims = v.shape().and_then(|s| s.as_known()).ok_or_else(|| {
                AdError(format!(
                    "the Jacobian needs the shape of {what}, which is not known here ({v})"
                ))
            })?;
            out.push(Leaf {
                path: path.clone(),
                dtype: *dtype,
                dims,
                scalar: matches!(v, AbsVal::Scalar { .. }),
            });
            Ok(())
        }
        other => Err(AdError(format!(
            "the Jacobian is taken of float tensors and scalars; {what} is {other}"
        ))),
    }
}

fn get_path(b: &mut Body, g: GraphId, mut x: NodeId, path: &[usize]) -> NodeId {
    for &i in path {
        x = tuple_get(b, g, x, i);
    }
    x
}

/// The one-hot value of a leaf: 1 at flat position `i`, 0 elsewhere.
fn one_hot(b: &mut Body, leaf: &Leaf, i: usize) -> NodeId {
    if leaf.scalar {
        return b.add_const(
            Value::Scalar {
                value: ScalarConst::Float(1.0),
                dtype: leaf.dtype,
                weak: false,
            },
            None,
        );
    }
    let dims: Vec<usize> = leaf.dims.iter().map(|&d| d as usize).collect();
    let n: usize = dims.iter().product();
    let mut data = vec![0.0; n];
    data[i] = 1.0;
    let t = Tensor::from_f64(dims, data)
        .expect("the data fits the shape")
        .cast(leaf.dtype);
    b.add_const(Value::Tensor(Arc::new(t)), None)
}

fn numel(leaf: &Leaf) -> usize {
    leaf.dims.iter().map(|&d| d as usize).product()
}

fn reshape(b: &mut Body, g: GraphId, x: NodeId, dims: &[i64]) -> NodeId {
    let shape = AttrValue::Tuple(dims.iter().map(|&d| AttrValue::Int(d)).collect());
    let p = crate::builder::prim_ref("Reshape", &[("shape", shape)]);
    b.add_prim_call(g, p, &[x], None)
}

fn stack(b: &mut Body, g: GraphId, items: &[NodeId], axis: i64) -> NodeId {
    let t = make_tuple(b, g, items);
    let p = crate::builder::prim_ref("Stack", &[("axis", AttrValue::Int(axis))]);
    b.add_prim_call(g, p, &[t], None)
}

/// JAX's structure ([`ir::batching::jacobian_tree`]): per output leaf,
/// then per `wrt` item when `wrt` is a tuple.
fn assemble(
    b: &mut Body,
    g: GraphId,
    out: &AbsVal,
    path: &mut Vec<usize>,
    blocks: &HashMap<(Vec<usize>, usize), NodeId>,
    nwrt: usize,
    by_item: bool,
) -> NodeId {
    match out {
        AbsVal::Tuple(items) => {
            let parts: Vec<NodeId> = (0..items.len())
                .map(|i| {
                    path.push(i);
                    let r = assemble(b, g, &items[i], path, blocks, nwrt, by_item);
                    path.pop();
                    r
                })
                .collect();
            make_tuple(b, g, &parts)
        }
        _ if by_item => {
            let parts: Vec<NodeId> = (0..nwrt).map(|p| blocks[&(path.clone(), p)]).collect();
            make_tuple(b, g, &parts)
        }
        _ => blocks[&(path.clone(), 0)],
    }
}

impl Cx {
    /// `jacfwd`, `jacrev` or `hessian` of top-level `item`.
    pub(super) fn jacobian(
        &mut self,
        item: &Item,
        visible: usize,
        meta: &MetaFn,
        args: Option<&[AbsVal]>,
    ) -> Result<Derived, AdError> {
        let wrt = meta.wrt().cloned();
        let body = self.world.bodies[item].clone();
        let root = body.graph(body.root()).clone();
        let k = visible.min(root.params.len());
        let positions: Vec<usize> = match &wrt {
            None if k == 0 => {
                return Err(AdError(format!(
                    "`{}` needs a function with at least one parameter; `{item}` takes none",
                    meta.name()
                )))
            }
            None => vec![0],
            Some(items) => items
                .iter()
                .map(|w| match w {
                    WrtItem::Param(i) if *i < k => Ok(*i),
                    WrtItem::Param(i) => Err(AdError(format!(
                        "`wrt` names parameter {i}, but `{item}` takes {k} parameters"
                    ))),
                    WrtItem::Weight(w) => Err(AdError(format!(
                        "`{}` takes `wrt=` parameters by position, not the weight `{w}`",
                        meta.name()
                    ))),
                })
                .collect::<Result<_, _>>()?,
        };
        let given = self.param_values(item, args);
        let pname = |i: usize| {
            body.node(root.params[i])
                .name
                .clone()
                .unwrap_or_else(|| format!("x{i}"))
        };
        let name = self.fresh(&format!("{}_{item}", meta.name()));
        let mut b = Body::default();
        let g = b.add_graph(name.clone(), None, GraphOrigin::Generated);
        let params: Vec<NodeId> = (0..root.params.len())
            .map(|i| {
                let p = b.add_param(g, pname(i), None);
                b.node_mut(p).annotation = body.node(root.params[i]).annotation.clone();
                p
            })
            .collect();
        let target = b.add_const(Value::Global(item.to_string()), None);
        let result = match meta {
            MetaFn::Hessian { .. } => {
                // jacfwd(jacrev(f, wrt), wrt)(x...)
                let inner = b.add_const(Value::Meta(MetaFn::Jacrev { wrt: wrt.clone() }), None);
                let outer = b.add_const(Value::Meta(MetaFn::Jacfwd { wrt: wrt.clone() }), None);
                let jr = b.add_apply(g, vec![inner, target], None);
                let jf = b.add_apply(g, vec![outer, jr], None);
                call(&mut b, g, jf, &params)
            }
            _ => {
                let an = absint::analyze(&self.world, item, GraphId(0), &given);
                let out = an.ret(item, GraphId(0)).to_absval();
                let mut outs = Vec::new();
                leaves(
                    &out,
                    &mut Vec::new(),
                    &mut outs,
                    &format!("`{item}`'s output"),
                )?;
                let mut xs = Vec::new();
                for &p in &positions {
                    let mut l = Vec::new();
                    leaves(
                        &given[p].to_absval(),
                        &mut Vec::new(),
                        &mut l,
                        &format!("parameter {p} of `{item}`"),
                    )?;
                    match l.pop() {
                        Some(x) if l.is_empty() && x.path.is_empty() => xs.push(x),
                        _ => {
                            return Err(AdError(format!(
                                "`{}` is taken with respect to a tensor or scalar; parameter {p} of `{item}` is {}",
                                meta.name(),
                                given[p].to_absval()
                            )))
                        }
                    }
                }
                let mut blocks: HashMap<(Vec<usize>, usize), NodeId> = HashMap::new();
                if matches!(meta, MetaFn::Jacrev { .. }) {
                    // Rows: the backpropagator of every one-hot sensitivity.
                    let vjp = b.add_const(Value::Meta(MetaFn::Vjp), None);
                    let vf = b.add_apply(g, vec![vjp, target], None);
                    let r = call(&mut b, g, vf, &params);
                    let y = tuple_get(&mut b, g, r, 0);
                    let bp = tuple_get(&mut b, g, r, 1);
                    for (li, leaf) in outs.iter().enumerate() {
                        let mut rows: Vec<Vec<NodeId>> = vec![Vec::new(); positions.len()];
                        for i in 0..numel(leaf) {
                            let sens = self.sensitivity(&mut b, g, y, &out, &outs, li, i);
                            let d = call(&mut b, g, bp, &[sens]);
                            for (pi, &p) in positions.iter().enumerate() {
                                rows[pi].push(tuple_get(&mut b, g, d, p));
                            }
                        }
                        for (pi, x) in xs.iter().enumerate() {
                            let s = stack(&mut b, g, &rows[pi], 0);
                            let mut dims = leaf.dims.clone();
                            dims.extend(&x.dims);
                            blocks.insert((leaf.path.clone(), pi), reshape(&mut b, g, s, &dims));
                        }
                    }
                } else {
                    // Columns: the tangent along every one-hot direction.
                    let jvp = b.add_const(Value::Meta(MetaFn::Jvp), None);
                    let jf = b.add_apply(g, vec![jvp, target], None);
                    let zeros: Vec<NodeId> = params
                        .iter()
                        .map(|&p| prim(&mut b, g, "ZerosLike", &[p]))
                        .collect();
                    for (pi, (&p, x)) in positions.iter().zip(&xs).enumerate() {
                        let mut cols: Vec<Vec<NodeId>> = vec![Vec::new(); outs.len()];
                        for j in 0..numel(x) {
                            let mut call_args = params.clone();
                            call_args.extend(&zeros);
                            call_args[params.len() + p] = one_hot(&mut b, x, j);
                            let r = call(&mut b, g, jf, &call_args);
                            let t = tuple_get(&mut b, g, r, 1);
                            for (li, leaf) in outs.iter().enumerate() {
                                cols[li].push(get_path(&mut b, g, t, &leaf.path));
                            }
                        }
                        for (li, leaf) in outs.iter().enumerate() {
                            let s = stack(&mut b, g, &cols[li], leaf.dims.len() as i64);
                            let mut dims = leaf.dims.clone();
                            dims.extend(&x.dims);
                            blocks.insert((leaf.path.clone(), pi), reshape(&mut b, g, s, &dims));
                        }
                    }
                }
                assemble(
                    &mut b,
                    g,
                    &out,
                    &mut Vec::new(),
                    &blocks,
                    positions.len(),
                    wrt.is_some(),
                )
            }
        };
        b.graph_mut(g).output = Some(result);
        self.add_item(&name, b);
        let entry_item: Item = Arc::from(name.as_str());
        let params = self.param_values(&entry_item, args);
        self.expand_all(&entry_item, &params)?;
        let graphs = vec![(name.clone(), (*self.world.bodies[&entry_item]).clone())];
        self.generated.retain(|(n, _)| *n != name);
        Ok(Derived {
            entry: name,
            graphs,
        })
    }

    /// The sensitivity of the whole output that is one-hot at flat
    /// position `i` of leaf `li` and zero on every other leaf.
    #[allow(clippy::too_many_arguments)]
    fn sensitivity(
        &mut self,
        b: &mut Body,
        g: GraphId,
        y: NodeId,
        out: &AbsVal,
        outs: &[Leaf],
        li: usize,
        i: usize,
    ) -> NodeId {
        fn build(
            b: &mut Body,
            g: GraphId,
            y: NodeId,
            v: &AbsVal,
            path: &mut Vec<usize>,
            target: &Leaf,
            hot: NodeId,
        ) -> NodeId {
            match v {
                AbsVal::Tuple(items) => {
                    let parts: Vec<NodeId> = (0..items.len())
                        .map(|k| {
                            path.push(k);
                            let yk = tuple_get(b, g, y, k);
                            let r = build(b, g, yk, &items[k], path, target, hot);
                            path.pop();
                            r
                        })
                        .collect();
                    make_tuple(b, g, &parts)
                }
                _ if *path == target.path => hot,
                _ => prim(b, g, "ZerosLike", &[y]),
            }
        }
        let hot = one_hot(b, &outs[li], i);
        build(b, g, y, out, &mut Vec::new(), &outs[li], hot)
    }
}
