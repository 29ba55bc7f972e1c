//! Sorting and medians along one axis: TopK, TopkExt, Sort, SortExt,
//! ArgSort, Median (see `reduce::index` for the conventions: stable sorts,
//! NaN sorting as the largest value, the lower median, index dtypes).

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::{is_float_input, make_tensor};
use crate::defs::reduce::aggregate::input_tensor;
use crate::defs::reduce::index::{
    dims_without, empty_axis, index_tensor, is_nan, line_offsets, per_kind, picked_grad,
    shape_without, split, tensor_or_unranked,
};
use crate::defs::shape::op_axis;
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef};

// ---------------------------------------------------------------------------
// Sorting: TopK, TopkExt, Sort, SortExt, ArgSort.

/// A total order for sorting: NaN above everything.
fn order<T: PartialOrd>(a: &T, b: &T) -> std::cmp::Ordering {
    match (is_nan(a), is_nan(b)) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal),
    }
}

/// The first `k` elements of every line, stably sorted, and their indices;
/// the result has `k` where the line had `n`.
fn sort_lines<T: Copy + PartialOrd>(
    v: &[T],
    (outer, n, inner): (usize, usize, usize),
    descending: bool,
    k: usize,
) -> (Vec<T>, Vec<i64>) {
    let total = outer * k * inner;
    let mut vals = Vec::with_capacity(total);
    let mut idx = vec![0i64; total];
    vals.resize(
        total,
        v.first()
            .copied()
            .unwrap_or_else(|| unreachable!("k = 0 when empty")),
    );
    let mut perm: Vec<usize> = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            let offs: Vec<usize> = line_offsets(o, i, n, inner).collect();
            perm.clear();
            perm.extend(0..n);
            if descending {
                perm.sort_by(|&a, &b| order(&v[offs[b]], &v[offs[a]]));
            } else {
                perm.sort_by(|&a, &b| order(&v[offs[a]], &v[offs[b]]));
            }
            for (j, &p) in perm.iter().take(k).enumerate() {
                let q = o * k * inner + j * inner + i;
                vals[q] = v[offs[p]];
                idx[q] = p as i64;
            }
        }
    }
    (vals, idx)
}

/// `(axis, descending, k)` of a sorting op (`k = None`: the whole axis).
fn sort_params(op: &str, attrs: &Attrs) -> (i64, bool, Option<i64>) {
    match op {
        "TopK" => (-1, true, Some(attrs.int("k"))),
        "TopkExt" => (
            attrs.int("dim"),
            attrs.bool("largest"),
            Some(attrs.int("k")),
        ),
        "Sort" => (attrs.int("axis"), attrs.bool("descending"), None),
        _ => (attrs.int("dim"), attrs.bool("descending"), None),
    }
}

fn sort_index_dtype(op: &str) -> DType {
    if matches!(op, "TopK" | "Sort") {
        DType::I32
    } else {
        DType::I64
    }
}

fn axis_attr_of(op: &str) -> &'static str {
    match op {
        "TopK" | "Sort" => "axis",
        _ => "dim",
    }
}

fn infer_sort(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, dims) = input_tensor(call, 0, true, false)?;
    let (axis, _, k) = sort_params(op, call.attrs);
    let out_dims = match dims {
        None => None,
        Some(mut d) => {
            if op == "TopK" && d.is_empty() {
                return Err(OpError::input(
                    0,
                    format!(
                        "`TopK` needs `input` of rank 1 or more, got {}",
                        call.inputs[0]
                    ),
                ));
            }
            let i = op_axis(op, axis, d.len(), axis_attr_of(op))?;
            if let Some(k) = k {
                let n = d.get(i).and_then(Dim::known);
                let lo = if op == "TopK" { 1 } else { 0 };
                if k < lo || n.is_some_and(|n| k > n) {
                    let range =
                        n.map_or("the size of the dimension".to_string(), |n| n.to_string());
                    return Err(OpError::attr(
                        "k",
                        format!("`{op}`: `k` must lie in [{lo}, {range}], got {k}"),
                    ));
                }
                if !d.is_empty() {
                    d[i] = Dim::Known(k);
                }
            }
            Some(d)
        }
    };
    let index = tensor_or_unranked(sort_index_dtype(op), out_dims.clone());
    Ok(if op == "ArgSort" {
        index
    } else {
        AbsVal::Tuple(vec![tensor_or_unranked(dtype, out_dims), index])
    })
}

fn k_sort(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    if x.dtype().is_bool() {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a numeric tensor, not bool"),
        ));
    }
    if op == "TopK" && x.rank() == 0 {
        return Err(OpError::input(0, "`TopK` needs `input` of rank 1 or more"));
    }
    let (axis, descending, k) = sort_params(op, c.attrs);
    let axis = op_axis(op, axis, x.rank(), axis_attr_of(op))?;
    let parts = split(x.shape(), axis);
    let k = match k {
        Some(k) if k < 0 || k as usize > parts.1 => {
            return Err(OpError::attr(
                "k",
                format!(
                    "`{op}`: `k` is {k}, but the dimension has {} elements",
                    parts.1
                ),
            ))
        }
        Some(k) => k as usize,
        None => parts.1,
    };
    let mut shape = x.shape().to_vec();
    if !shape.is_empty() {
        shape[axis] = k;
    }
    let (vals, idx) = if x.numel() == 0 || k == 0 {
        let empty = Tensor::zeros(x.dtype(), shape.clone());
        (empty.into_buffer(), Vec::new())
    } else {
        per_kind!(x, |v| sort_lines(v, parts, descending, k))
    };
    let index = index_tensor(sort_index_dtype(op), shape.clone(), idx)?;
    Ok(if op == "ArgSort" {
        index
    } else {
        KValue::Tuple(vec![
            KValue::Tensor(make_tensor(x.dtype(), shape, vals)?),
            index,
        ])
    })
}

fn grad_sort(b: &mut dyn GradBuilder, c: &GradCall, op: &str) -> Vec<Option<GNode>> {
    let (axis, _, _) = sort_params(op, c.attrs);
    picked_grad(b, c, 0, 1, axis, true)
}

// ---------------------------------------------------------------------------
// Median.

/// The lower median of one line and its index (see the module docs for NaN).
fn median_line<T: Copy + PartialOrd>(line: &[T], ignore_nan: bool) -> (T, usize) {
    if let Some(p) = line.iter().position(|&e| is_nan(e)) {
        if !ignore_nan {
            return (line[p], p);
        }
    }
    let mut perm: Vec<usize> = (0..line.len()).filter(|&j| !is_nan(line[j])).collect();
    if perm.is_empty() {
        return (line[0], 0);
    }
    perm.sort_by(|&a, &b| order(&line[a], &line[b]));
    let p = perm[(perm.len() - 1) / 2];
    (line[p], p)
}

fn median_lines<T: Copy + PartialOrd>(
    v: &[T],
    (outer, n, inner): (usize, usize, usize),
    ignore_nan: bool,
) -> (Vec<T>, Vec<i64>) {
    let mut vals = Vec::with_capacity(outer * inner);
    let mut idx = Vec::with_capacity(outer * inner);
    let mut line = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            line.clear();
            line.extend(line_offsets(o, i, n, inner).map(|p| v[p]));
            let (m, k) = median_line(&line, ignore_nan);
            vals.push(m);
            idx.push(k as i64);
        }
    }
    (vals, idx)
}

fn infer_median(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = input_tensor(call, 0, true, false)?;
    let keep = call.attrs.bool("keep_dims");
    let out = if call.attrs.bool("global_median") {
        if keep {
            return Err(OpError::attr(
                "keep_dims",
                "`Median`: with `global_median`, `keep_dims` must be false",
            ));
        }
        if let Some(d) = &dims {
            if d.contains(&Dim::Known(0)) {
                return Err(OpError::input(
                    0,
                    format!(
                        "`Median` of an empty tensor has no value: `x` is {}",
                        call.inputs[0]
                    ),
                ));
            }
        }
        Some(Vec::new())
    } else {
        match dims {
            None => None,
            Some(d) => {
                let i = op_axis("Median", call.attrs.int("axis"), d.len(), "axis")?;
                if d.get(i) == Some(&Dim::Known(0)) {
                    return Err(empty_axis("Median", i, &call.inputs[0]));
                }
                Some(dims_without(&d, i, keep))
            }
        }
    };
    Ok(AbsVal::Tuple(vec![
        tensor_or_unranked(dtype, out.clone()),
        tensor_or_unranked(DType::I64, out),
    ]))
}

fn k_median(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    if x.dtype().is_bool() {
        return Err(OpError::input(
            0,
            "`Median` needs a numeric tensor, not bool",
        ));
    }
    let ignore = c.attrs.bool("ignore_nan");
    let keep = c.attrs.bool("keep_dims");
    let global = c.attrs.bool("global_median");
    let (flat, axis, out_shape) = if global {
        let flat = x
            .clone()
            .reshaped(vec![x.numel()])
            .map_err(|e| OpError::call(e.0))?;
        (flat, 0, Vec::new())
    } else {
        let axis = op_axis("Median", c.attrs.int("axis"), x.rank(), "axis")?;
        (x.clone(), axis, shape_without(x.shape(), axis, keep))
    };
    let parts = split(flat.shape(), axis);
    if parts.1 == 0 {
        return Err(OpError::input(
            0,
            format!(
                "`Median` of an empty dimension has no value (`x` has shape {:?})",
                x.shape()
            ),
        ));
    }
    let (vals, mut idx) = per_kind!(flat, |v| median_lines(v, parts, ignore));
    if global {
        idx = vec![0];
    }
    Ok(KValue::Tuple(vec![
        KValue::Tensor(make_tensor(x.dtype(), out_shape.clone(), vals)?),
        index_tensor(DType::I64, out_shape, idx)?,
    ]))
}

fn grad_median(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !c.attrs.bool("global_median") {
        return picked_grad(b, c, 0, 1, c.attrs.int("axis"), c.attrs.bool("keep_dims"));
    }
    if !is_float_input(c, 0) {
        return vec![None];
    }
    // MedianGrad of the global median: shared among the elements equal to it.
    let x = c.inputs[0];
    let y = b.tuple_get(c.out, 0);
    let dy = b.tuple_get(c.dout, 0);
    let hit = b.prim("Equal", &[x, y], vec![]);
    let ones = b.prim("OnesLike", &[x], vec![]);
    let zeros = b.prim("ZerosLike", &[x], vec![]);
    let ind = b.prim("Select", &[hit, ones, zeros], vec![]);
    let count = b.prim("ReduceSum", &[ind], vec![]);
    let share = b.prim("RealDiv", &[ind, count], vec![]);
    vec![Some(b.prim("Mul", &[share, dy], vec![]))]
}

// ---------------------------------------------------------------------------
// The table.

const SORT_EXT_PARAMS: Schema = Schema::ms(
    &[],
    &[
        ("input", "A numeric tensor."),
        ("dim", "The dimension to sort along (default -1, the last)."),
        (
            "descending",
            "Sort from largest to smallest (default `false`).",
        ),
        (
            "stable",
            "Keep equal elements in their order; sorting here is always stable.",
        ),
    ],
);

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "TopK",
        category: Category::Reduction,
        doc: "The `k` largest elements along the last dimension of `input` and their `i32` indices, `(values, indices)`, largest first; equal values keep their order. (With `sorted=false` MindSpore's order is unspecified; this returns the sorted one.)",
        schema: Schema::ms(
            &[Override::attr("k", AttrType::Int, None, why::TO_ATTR)],
            &[
                ("input", "A numeric tensor of rank 1 or more."),
                ("k", "How many elements to take, in `[1, size of the last dimension]`."),
                ("sorted", "Return the values largest first (default `true`)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["values", "indices"]),
        infer: infer_sort,
        grad: Some(|b, c| grad_sort(b, c, "TopK")),
        kernel: Some(|c| k_sort(c, "TopK")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "TopkExt",
        category: Category::Reduction,
        doc: "The `k` largest (or, with `largest=false`, smallest) elements of `input` along `dim` and their `i64` indices, `(values, indices)`, sorted (`mint.topk`); equal values keep their order.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "A numeric tensor."),
                ("k", "How many elements to take, at most the size of `dim`."),
                ("dim", "The dimension to search (default -1, the last)."),
                ("largest", "Take the largest (the default) or the smallest elements."),
                ("sorted", "Return them in order; they always are here."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["values", "indices"]),
        infer: infer_sort,
        grad: Some(|b, c| grad_sort(b, c, "TopkExt")),
        kernel: Some(|c| k_sort(c, "TopkExt")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "Sort",
        category: Category::Reduction,
        doc: "Sorts `x` along `axis`, returning `(values, indices)` with `i32` indices; the sort is stable and a NaN sorts as the largest value.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "A numeric tensor."),
                ("axis", "The dimension to sort along (default -1, the last)."),
                ("descending", "Sort from largest to smallest (default `false`)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["values", "indices"]),
        infer: infer_sort,
        grad: Some(|b, c| grad_sort(b, c, "Sort")),
        kernel: Some(|c| k_sort(c, "Sort")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "SortExt",
        category: Category::Reduction,
        doc: "Sorts `input` along `dim`, returning `(values, indices)` with `i64` indices (`mint.sort`); stable, a NaN sorts as the largest value.",
        schema: SORT_EXT_PARAMS,
        variadic: false,
        output: OutputDef::Tuple(&["values", "indices"]),
        infer: infer_sort,
        grad: Some(|b, c| grad_sort(b, c, "SortExt")),
        kernel: Some(|c| k_sort(c, "SortExt")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "ArgSort",
        category: Category::Reduction,
        doc: "The `i64` indices that sort `input` along `dim` (`mint.argsort`); stable, a NaN sorts as the largest value.",
        schema: SORT_EXT_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_sort,
        grad: None,
        kernel: Some(|c| k_sort(c, "ArgSort")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "Median",
        category: Category::Reduction,
        doc: "The lower median of `x` along `axis` (or of all of `x` with `global_median`) and its `i64` index, `(y, indices)`. A NaN makes the result NaN (at the first NaN's index) unless `ignore_nan`; with `global_median` the index is 0 and `keep_dims` must be false.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "A numeric tensor."),
                ("global_median", "Take the median of all elements (default `false`)."),
                ("axis", "The dimension to reduce when not global (default 0)."),
                ("keep_dims", "Keep the reduced dimension with size 1 (default `false`)."),
                ("ignore_nan", "Leave NaNs out instead of returning NaN (default `false`)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["y", "indices"]),
        infer: infer_median,
        grad: Some(grad_median),
        kernel: Some(k_median),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let r = random_f64;
    let i = AttrValue::Int;
    let t = AttrValue::Bool(true);
    vec![
        Sample::new("TopK", vec![r(&[3, 5], 418, -2.0, 2.0)]).attr("k", i(2)),
        Sample::new("TopkExt", vec![r(&[4, 3], 419, -2.0, 2.0)])
            .attr("k", i(2))
            .attr("dim", i(0))
            .attr("largest", AttrValue::Bool(false)),
        Sample::new("Sort", vec![r(&[3, 4], 420, -2.0, 2.0)]),
        Sample::new("Sort", vec![r(&[3, 4], 421, -2.0, 2.0)])
            .attr("axis", i(0))
            .attr("descending", t.clone()),
        Sample::new("SortExt", vec![r(&[2, 5], 422, -2.0, 2.0)]).attr("descending", t.clone()),
        Sample::new("ArgSort", vec![r(&[2, 5], 423, -2.0, 2.0)]).attr("dim", i(0)),
        Sample::new("Median", vec![r(&[3, 4], 424, -2.0, 2.0)]),
        Sample::new("Median", vec![r(&[3, 4], 425, -2.0, 2.0)])
            .attr("axis", i(-1))
            .attr("keep_dims", t.clone()),
        Sample::new("Median", vec![r(&[3, 3], 426, -2.0, 2.0)]).attr("global_median", t),
    ]
}
