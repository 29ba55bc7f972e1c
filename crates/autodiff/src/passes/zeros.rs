//! Zero and one propagation, guided by what the abstract interpretation knows
//! of each node's type (a rewrite applies only where it keeps the type):
//!
//! - `Add(x, ZerosLike(y))` and `Sub(x, ZerosLike(y))` are `x`;
//!   `Sub(ZerosLike(y), x)` is `Neg(x)`;
//! - a primitive linear in an input that is `ZerosLike(y)` (`Mul`, `Neg`,
//!   `MatMul`, reductions, reshapes, ...) gives `ZerosLike` of a same-typed value;
//! - `Mul(x, OnesLike(y))` is `x`; `ZerosLike(ZerosLike(y))` is `ZerosLike(y)`;
//!   `OnesLike(x)`/`ZerosLike(x)` of a computed `x` take a parameter of the
//!   same type instead (so `x` need not be computed just for its shape);
//! - `_SumToShapeOf(g, like)` (the reduction of a broadcast gradient) is `g`
//!   when no broadcasting happened, or `ReduceSum` over the broadcast axes when
//!   the shapes say which they are; `_ReshapeLike(g, like)` is `g` when the
//!   shapes agree.

use std::collections::HashMap;

use ir::{AbsVal, AttrValue, Body, Dim, NodeId, NodeKind, PrimRef, Shape, Value};

use crate::absint::AV;
use crate::builder::{prim_ref, replace_uses};

/// Primitives whose result is zero when input `i` (listed) is zero.
fn linear_in(name: &str) -> &'static [usize] {
    match name {
        "Mul" | "MatMul" | "BatchMatMul" => &[0, 1],
        "RealDiv"
        | "Neg"
        | "ReduceSum"
        | "ReduceMean"
        | "Transpose"
        | "Reshape"
        | "ExpandDims"
        | "Squeeze"
        | "BroadcastTo"
        | "Tile"
        | "Flatten"
        | "Cast"
        | "_SumToShapeOf"
        | "_ReshapeLike"
        | "_BroadcastToShapeOf"
        | "BiasAddGrad"
        | "_TileGrad" => &[0],
        _ => &[],
    }
}

/// A type known well enough to compare: a dtype and a ranked shape whose
/// dimensions are numbers or symbols.
fn concrete(v: &AV) -> Option<&AbsVal> {
    match v {
        AV::Data(a @ AbsVal::Tensor { shape, .. }) => {
            let dims = shape.dims()?;
            dims.iter().all(|d| !matches!(d, Dim::Unknown)).then_some(a)
        }
        AV::Data(a @ AbsVal::Scalar { .. }) => Some(a),
        _ => None,
    }
}

fn same_type(a: &AV, b: &AV) -> bool {
    match (concrete(a), concrete(b)) {
        (
            Some(AbsVal::Tensor {
                dtype: d1,
                shape: s1,
            }),
            Some(AbsVal::Tensor {
                dtype: d2,
                shape: s2,
            }),
        ) => d1 == d2 && s1 == s2,
        (Some(AbsVal::Scalar { dtype: d1, .. }), Some(AbsVal::Scalar { dtype: d2, .. })) => {
            d1 == d2
        }
        _ => false,
    }
}

/// Runs the rewrites; `ty` gives each node's abstract value.
pub fn run(body: &mut Body, ty: &dyn Fn(NodeId) -> AV) -> bool {
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    let mut changed = false;
    let resolve = |repl: &HashMap<NodeId, NodeId>, mut n: NodeId| {
        while let Some(&m) = repl.get(&n) {
            n = m;
        }
        n
    };
    for g in body.graph_ids().collect::<Vec<_>>() {
        for n in body.graph(g).nodes.clone() {
            let Some(name) = body.called_prim(n).map(|p| p.name.clone()) else {
                continue;
            };
            let args: Vec<NodeId> = body.inputs(n)[1..]
                .iter()
                .map(|&a| resolve(&repl, a))
                .collect();
            let tn = ty(n);
            let zero_of = |body: &Body, x: NodeId| -> Option<NodeId> {
                (body.called_prim(x)?.name == "ZerosLike").then(|| body.inputs(x)[1])
            };
            let ones_of = |body: &Body, x: NodeId| -> Option<NodeId> {
                (body.called_prim(x)?.name == "OnesLike").then(|| body.inputs(x)[1])
            };
            // A replacement by an existing node.
            let mut to: Option<NodeId> = None;
            // A rewrite of this node into `ZerosLike(z)`.
            let mut zeros_like: Option<NodeId> = None;
            match (name.as_str(), args.as_slice()) {
                ("Add", [x, y]) => {
                    if zero_of(body, *y).is_some() && same_type(&ty(*x), &tn) {
                        to = Some(*x);
                    } else if zero_of(body, *x).is_some() && same_type(&ty(*y), &tn) {
                        to = Some(*y);
                    }
                }
                ("Sub", [x, y]) => {
                    if zero_of(body, *y).is_some() && same_type(&ty(*x), &tn) {
                        to = Some(*x);
                    } else if zero_of(body, *x).is_some() && same_type(&ty(*y), &tn) {
                        let neg = body.add_const(Value::Prim(PrimRef::new("Neg")), None);
                        body.node_mut(n).kind = NodeKind::Apply(vec![neg, *y]);
                        changed = true;
                        continue;
                    }
                }
                ("ZerosLike", [x]) => {
                    if let Some(y) = zero_of(body, *x).or_else(|| ones_of(body, *x)) {
                        zeros_like = Some(y);
                    }
                }
                ("Switch", [_, a, b]) => {
                    if let (Some(y1), Some(y2)) = (zero_of(body, *a), zero_of(body, *b)) {
                        if y1 == y2 {
                            to = Some(*a);
                        }
                    }
                }
                ("_SumToShapeOf" | "_ReshapeLike", [x, _]) if same_type(&ty(*x), &tn) => {
                    to = Some(*x);
                }
                _ => {}
            }
            if to.is_none() && zeros_like.is_none() && name == "Mul" {
                for (i, j) in [(0, 1), (1, 0)] {
                    if ones_of(body, args[i]).is_some() && same_type(&ty(args[j]), &tn) {
                        to = Some(args[j]);
                        break;
                    }
                }
            }
            if to.is_none() && zeros_like.is_none() {
                let zero_inputs: Vec<NodeId> = linear_in(&name)
                    .iter()
                    .filter_map(|&i| args.get(i).and_then(|&a| zero_of(body, a)))
                    .collect();
                if !zero_inputs.is_empty() {
                    // A same-typed value to take zeros like.
                    let candidates = zero_inputs.iter().chain(args.iter());
                    zeros_like = candidates.copied().find(|&c| same_type(&ty(c), &tn));
                }
            }
            if to.is_none() && zeros_like.is_none() && (name == "ZerosLike" || name == "OnesLike") {
                // Zeros or ones like a computed value: like a parameter of the
                // same type instead, so the value need not be computed for it.
                let x = args[0];
                if matches!(body.node(x).kind, NodeKind::Apply(_)) {
                    let tx = ty(x);
                    let mut scope = Some(g);
                    let mut found = None;
                    while let (Some(s), None) = (scope, found) {
                        found = body
                            .graph(s)
                            .params
                            .iter()
                            .copied()
                            .find(|&p| same_type(&ty(p), &tx));
                        scope = body.graph(s).parent;
                    }
                    if let Some(p) = found {
                        if let NodeKind::Apply(inputs) = &mut body.node_mut(n).kind {
                            inputs[1] = p;
                            changed = true;
                        }
                        continue;
                    }
                }
            }
            if let Some(t) = to {
                repl.insert(n, t);
            } else if let Some(z) = zeros_like {
                let zl = body.add_const(Value::Prim(PrimRef::new("ZerosLike")), None);
                body.node_mut(n).kind = NodeKind::Apply(vec![zl, z]);
                changed = true;
            } else if name == "_SumToShapeOf" {
                if let [x, like] = args.as_slice() {
                    if let Some(r) = sum_to_shape(body, g, *x, &ty(*x), &ty(*like)) {
                        repl.insert(n, r);
                    }
                }
            }
        }
    }
    if !repl.is_empty() {
        changed = true;
        replace_uses(body, &repl);
    }
    changed
}

/// `_SumToShapeOf(x, like)` as `ReduceSum`s, when the shapes say which axes
/// were broadcast: the leading axes `x` has more, and those where `like` has
/// size 1 and `x` has another. The new nodes go right after `x`.
fn sum_to_shape(body: &mut Body, g: ir::GraphId, x: NodeId, tx: &AV, tlike: &AV) -> Option<NodeId> {
    ops::lookup("ReduceSum")?;
    let (
        AbsVal::Tensor {
            shape: Shape::Ranked(gd),
            dtype: gdtype,
        },
        AbsVal::Tensor {
            shape: Shape::Ranked(ld),
            dtype,
        },
    ) = (concrete(tx)?, concrete(tlike)?)
    else {
        return None;
    };
    // `_SumToShapeOf` also casts back to `like`'s dtype (a promoted input's
    // gradient); ReduceSum alone would not, so keep it in mixed precision.
    if !dtype.is_float() || gdtype != dtype || ld.len() > gd.len() {
        return None;
    }
    let lead = gd.len() - ld.len();
    let mut ones = Vec::new();
    for (i, d) in ld.iter().enumerate() {
        let gdim = &gd[lead + i];
        if d == gdim {
            continue;
        }
        if *d == Dim::Known(1) {
            ones.push((lead + i) as i64);
        } else {
            return None;
        }
    }
    if lead == 0 && ones.is_empty() {
        return None;
    }
    let ints = |v: Vec<i64>| AttrValue::Tuple(v.into_iter().map(AttrValue::Int).collect());
    let mut cur = x;
    let mut new_nodes = Vec::new();
    if !ones.is_empty() {
        let p = prim_ref(
            "ReduceSum",
            &[("axis", ints(ones)), ("keep_dims", AttrValue::Bool(true))],
        );
        cur = body.add_prim_call(g, p, &[cur], None);
        new_nodes.push(cur);
    }
    if lead > 0 {
        let p = prim_ref(
            "ReduceSum",
            &[
                ("axis", ints((0..lead as i64).collect())),
                ("keep_dims", AttrValue::Bool(false)),
            ],
        );
        cur = body.add_prim_call(g, p, &[cur], None);
        new_nodes.push(cur);
    }
    // Move the new nodes right after `x` (or first, for a free variable or
    // parameter), so they come before any use.
    let nodes = &mut body.graph_mut(g).nodes;
    nodes.retain(|n| !new_nodes.contains(n));
    let at = nodes.iter().position(|&n| n == x).map_or(0, |i| i + 1);
    for (k, n) in new_nodes.into_iter().enumerate() {
        nodes.insert(at + k, n);
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::{dce, testutil::*};
    use expect_test::expect;
    use ir::DType;

    fn t(dims: &[i64]) -> AV {
        AV::Data(AbsVal::tensor(DType::F32, dims))
    }

    #[test]
    fn drops_added_zeros_and_ones_factors() {
        let (mut b, g, ps) = body(&["x", "y"]);
        let z = p(&mut b, g, "ZerosLike", &[ps[1]]);
        let s = p(&mut b, g, "Add", &[ps[0], z]);
        let o = p(&mut b, g, "OnesLike", &[ps[1]]);
        let m = p(&mut b, g, "Mul", &[o, s]);
        let e = p(&mut b, g, "Exp", &[m]);
        b.graph_mut(g).output = Some(e);
        let ty = |_: NodeId| t(&[3]);
        assert!(run(&mut b, &ty));
        dce::run(&mut b);
        expect![[r#"
            graph f(x, y) {
              %0 = Exp(x)
              return %0
            }
        "#]]
        .assert_eq(&print(&b));
    }

    #[test]
    fn ones_like_a_parameter_of_the_same_type() {
        let (mut b, g, ps) = body(&["x", "y"]);
        let e = p(&mut b, g, "Exp", &[ps[1]]);
        let o = p(&mut b, g, "OnesLike", &[e]);
        b.graph_mut(g).output = Some(o);
        let ty = |_: NodeId| t(&[3]);
        assert!(run(&mut b, &ty));
        dce::run(&mut b);
        expect![[r#"
            graph f(x, y) {
              %0 = OnesLike(x)
              return %0
            }
        "#]]
        .assert_eq(&print(&b));
    }

    #[test]
    fn keeps_zeros_that_broadcast() {
        let (mut b, g, ps) = body(&["x", "y"]);
        let z = p(&mut b, g, "ZerosLike", &[ps[1]]);
        let s = p(&mut b, g, "Add", &[ps[0], z]);
        b.graph_mut(g).output = Some(s);
        // y is [2, 3] and x is [3]: the sum is [2, 3], not x.
        let ty = move |n: NodeId| if n == ps[0] { t(&[3]) } else { t(&[2, 3]) };
        assert!(!run(&mut b, &ty));
    }

    #[test]
    fn propagates_zeros_through_linear_primitives() {
        let (mut b, g, ps) = body(&["x", "w"]);
        let z = p(&mut b, g, "ZerosLike", &[ps[0]]);
        let m = p(&mut b, g, "MatMul", &[z, ps[1]]);
        b.graph_mut(g).output = Some(m);
        // x: [2, 4], w: [4, 4]: the product is [2, 4], zeros like x.
        let ty = move |n: NodeId| if n == ps[1] { t(&[4, 4]) } else { t(&[2, 4]) };
        assert!(run(&mut b, &ty));
        dce::run(&mut b);
        expect![[r#"
            graph f(x, w) {
              %0 = ZerosLike(x)
              return %0
            }
        "#]]
        .assert_eq(&print(&b));
    }

    #[test]
    fn resolves_broadcast_reductions() {
        let (mut b, g, ps) = body(&["g", "like"]);
        let s = p(&mut b, g, "_SumToShapeOf", &[ps[0], ps[1]]);
        b.graph_mut(g).output = Some(s);
        let ty = move |n: NodeId| {
            if n == ps[1] || n == s {
                t(&[1, 3])
            } else {
                t(&[5, 2, 3])
            }
        };
        assert!(run(&mut b, &ty));
        dce::run(&mut b);
        expect![[r#"
            graph f(g, like) {
              %0 = ReduceSum(g, axis=(1,), keep_dims=true)
              %1 = ReduceSum(%0, axis=(0,))
              return %1
            }
        "#]]
        .assert_eq(&print(&b));
    }

    #[test]
    fn identity_reductions_disappear() {
        let (mut b, g, ps) = body(&["g", "like"]);
        let s = p(&mut b, g, "_SumToShapeOf", &[ps[0], ps[1]]);
        let e = p(&mut b, g, "Exp", &[s]);
        b.graph_mut(g).output = Some(e);
        let ty = |_: NodeId| t(&[2, 3]);
        assert!(run(&mut b, &ty));
        dce::run(&mut b);
        expect![[r#"
            graph f(g, like) {
              %0 = Exp(g)
              return %0
            }
        "#]]
        .assert_eq(&print(&b));
    }
}
