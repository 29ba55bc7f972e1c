//! Helpers the gradient rules of the shape and neural-network primitives build
//! on. Their names start with `_`; users do not call them. Inputs named
//! `*_like` are used for their shape only. (MindSpore's own backward
//! primitives, `LayerNormGrad` and the like, are public: `defs/backward/`.)

use crate::batch::BatchRule;
use crate::schema::Schema;
use crate::Family;
use crate::Traits;
use ir::{AbsVal, Shape};

use crate::defs::shape::{
    concat_slice, gather_offsets, op_axis, reshape_to, scatter_add, strided_slice_offsets,
    tile_offsets, tuple_tensors,
};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, AttrValue, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

/// A tensor with the dtype of input `d` and the shape of input `s`.
fn like(call: &InferCall, d: usize, s: usize) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let dtype = call.inputs[d]
        .dtype()
        .ok_or_else(|| OpError::input(d, format!("`{}` needs a tensor", call.op.name)))?;
    let shape = call.inputs[s].shape().unwrap_or(Shape::Unranked);
    Ok(AbsVal::Tensor { dtype, shape })
}

fn like_0_1(call: &InferCall) -> Result<AbsVal, OpError> {
    like(call, 0, 1)
}

fn like_2_0(call: &InferCall) -> Result<AbsVal, OpError> {
    like(call, 2, 0)
}

fn infer_concat_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    let dtype = call.inputs[0].dtype();
    match (&call.inputs[1], dtype) {
        (AbsVal::Tuple(items), Some(dtype)) => {
            let index = call.attrs.int("index");
            let item = usize::try_from(index)
                .ok()
                .and_then(|i| items.get(i))
                .ok_or_else(|| {
                    OpError::attr("index", format!("`_ConcatGrad`: no tuple element {index}"))
                })?;
            Ok(AbsVal::Tensor {
                dtype,
                shape: item.shape().unwrap_or(Shape::Unranked),
            })
        }
        _ => Ok(AbsVal::Any),
    }
}

fn check_numel(grad: &tensor::Tensor, n: usize, op: &str) -> Result<(), OpError> {
    if grad.numel() != n {
        return Err(OpError::input(
            0,
            format!(
                "`{op}`: the gradient has {} elements, the forward result had {n}",
                grad.numel()
            ),
        ));
    }
    Ok(())
}

fn ok(t: tensor::Tensor) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(t))
}

/// Every attribute of the call, to pass on to the adjoint primitive.
fn all(c: &GradCall) -> Vec<(&'static str, AttrValue)> {
    c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect()
}

/// `_ConcatGrad` takes one slice of `grad`: its adjoint puts the sensitivity
/// back in that slice, between zeros shaped like the other slices.
fn grad_concat_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let count = match c.input_values.get(1) {
        Some(AbsVal::Tuple(items)) => items.len(),
        _ => return vec![None, None],
    };
    let axis = c.attrs.int("axis");
    let index = c.attrs.int("index");
    let parts: Vec<GNode> = (0..count as i64)
        .map(|i| {
            if i == index {
                return c.dout;
            }
            let slice = b.prim(
                "_ConcatGrad",
                &[c.inputs[0], c.inputs[1]],
                vec![("axis", AttrValue::Int(axis)), ("index", AttrValue::Int(i))],
            );
            b.prim("ZerosLike", &[slice], vec![])
        })
        .collect();
    let t = b.make_tuple(&parts);
    vec![
        Some(b.prim("Concat", &[t], vec![("axis", AttrValue::Int(axis))])),
        None,
    ]
}

const GRAD_LIKE: Schema = Schema::own(GRAD_LIKE_LIST);
const GRAD_LIKE_LIST: &[ParamDef] = &[
    ParamDef::input("grad", "The gradient of the forward result."),
    ParamDef::input("like", "The forward input, for its shape."),
];

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "_ReshapeLike",
        category: Category::Internal,
        doc: "Reshapes `grad` to the shape of `like` (the gradient of Reshape, ExpandDims, Squeeze and Flatten).",
        schema: GRAD_LIKE,
        variadic: false,
        output: OutputDef::Single,
        infer: like_0_1,
        grad: Some(|b, c| {
            vec![
                Some(b.prim("_ReshapeLike", &[c.dout, c.inputs[0]], vec![])),
                None,
            ]
        }),
        kernel: Some(|c: &KernelCall| {
            let (g, l) = (c.tensor(0)?, c.tensor(1)?);
            ok(reshape_to(g, l.shape().to_vec())?)
        }),
        traits: Traits::of(Family::View).batched(BatchRule::Like { axes: None }),
    },
    OpDef {
        name: "_ConcatGrad",
        category: Category::Internal,
        doc: "The slice of `grad` (the gradient of a Concat) that belongs to element `index` of the concatenated tuple.",
        schema: Schema::own(&[
            ParamDef::input("grad", "The gradient of the Concat result."),
            ParamDef::input("tensors", "The tuple Concat joined, for the sizes."),
            ParamDef::attr("axis", AttrType::Int, Some(AttrDefault::Int(0)), "Concat's axis."),
            ParamDef::attr("index", AttrType::Int, None, "Which element's slice."),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_concat_grad,
        grad: Some(grad_concat_grad),
        kernel: Some(|c: &KernelCall| {
            let g = c.tensor(0)?;
            let parts = tuple_tensors(&c.inputs[1], 1)?;
            let axis = op_axis("Concat", c.attrs.int("axis"), g.rank(), "axis")?;
            ok(concat_slice(g, &parts, axis, c.attrs.int("index").max(0) as usize)?)
        }),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_TileGrad",
        category: Category::Internal,
        doc: "Sums `grad` (the gradient of a Tile) over the tiles, giving the shape of `like`.",
        schema: Schema::Own {
            params: &[
            GRAD_LIKE_LIST[0],
            GRAD_LIKE_LIST[1],
            ParamDef::attr("multiples", AttrType::IntTuple, None, "Tile's multiples."),
        ],
            why: "",
        },
        variadic: false,
        output: OutputDef::Single,
        infer: like_0_1,
        grad: Some(|b, c| vec![Some(b.prim("Tile", &[c.dout], all(c))), None]),
        kernel: Some(|c: &KernelCall| {
            let (g, l) = (c.tensor(0)?, c.tensor(1)?);
            let (_, offsets) = tile_offsets(l.shape(), &c.attrs.ints("multiples").unwrap_or_default())?;
            check_numel(g, offsets.len(), "_TileGrad")?;
            ok(scatter_add(g, l.shape().to_vec(), &offsets))
        }),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_GatherGrad",
        category: Category::Internal,
        doc: "Scatter-adds `grad` (the gradient of a Gather) into zeros shaped like `x`, at the gathered positions (MindSpore's UnsortedSegmentSum-based bprop).",
        schema: Schema::own(&[
            ParamDef::input("x", "Gather's `input_params`, for its shape."),
            ParamDef::input("indices", "Gather's `input_indices`."),
            ParamDef::input("grad", "The gradient of the Gather result."),
            ParamDef::attr("axis", AttrType::Int, None, "Gather's axis."),
            ParamDef::attr(
                "batch_dims",
                AttrType::Int,
                Some(AttrDefault::Int(0)),
                "Gather's batch_dims.",
            ),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: like_2_0,
        grad: Some(|b, c| {
            let g = b.prim("Gather", &[c.dout, c.inputs[1]], all(c));
            vec![None, None, Some(g)]
        }),
        kernel: Some(|c: &KernelCall| {
            let (x, idx, g) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
            let (_, offsets) = gather_offsets(
                x.shape(),
                idx,
                c.attrs.int("axis"),
                c.attrs.int("batch_dims"),
            )?;
            check_numel(g, offsets.len(), "_GatherGrad")?;
            ok(scatter_add(g, x.shape().to_vec(), &offsets))
        }),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_StridedSliceGrad",
        category: Category::Internal,
        doc: "Scatters `grad` (the gradient of a StridedSlice) into zeros shaped like `like`, at the sliced positions.",
        schema: Schema::Own {
            params: &[
            GRAD_LIKE_LIST[0],
            GRAD_LIKE_LIST[1],
            ParamDef::attr("begin", AttrType::IntTuple, None, "StridedSlice's begin."),
            ParamDef::attr("end", AttrType::IntTuple, None, "StridedSlice's end."),
            ParamDef::attr("strides", AttrType::IntTuple, None, "StridedSlice's strides."),
            ParamDef::attr("begin_mask", AttrType::Int, Some(AttrDefault::Int(0)), "As StridedSlice."),
            ParamDef::attr("end_mask", AttrType::Int, Some(AttrDefault::Int(0)), "As StridedSlice."),
            ParamDef::attr("ellipsis_mask", AttrType::Int, Some(AttrDefault::Int(0)), "As StridedSlice."),
            ParamDef::attr("new_axis_mask", AttrType::Int, Some(AttrDefault::Int(0)), "As StridedSlice."),
            ParamDef::attr("shrink_axis_mask", AttrType::Int, Some(AttrDefault::Int(0)), "As StridedSlice."),
        ],
            why: "",
        },
        variadic: false,
        output: OutputDef::Single,
        infer: like_0_1,
        grad: Some(|b, c| vec![Some(b.prim("StridedSlice", &[c.dout], all(c))), None]),
        kernel: Some(|c: &KernelCall| {
            let (g, l) = (c.tensor(0)?, c.tensor(1)?);
            let (_, offsets) = strided_slice_offsets(c.attrs, l.shape())?;
            check_numel(g, offsets.len(), "_StridedSliceGrad")?;
            ok(scatter_add(g, l.shape().to_vec(), &offsets))
        }),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    use tensor::DType;
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect());
    let i = AttrValue::Int;
    let tuple2 = |a: KValue, b2: KValue| KValue::Tuple(vec![a, b2]);
    vec![
        Sample::new(
            "_ReshapeLike",
            vec![
                random_f64(&[2, 3], 120, -1.0, 1.0),
                random_f64(&[3, 2], 121, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "_ConcatGrad",
            vec![
                random_f64(&[2, 5], 122, -1.0, 1.0),
                tuple2(
                    random_f64(&[2, 2], 123, -1.0, 1.0),
                    random_f64(&[2, 3], 124, -1.0, 1.0),
                ),
            ],
        )
        .attr("axis", i(1))
        .attr("index", i(1)),
        Sample::new(
            "_TileGrad",
            vec![
                random_f64(&[2, 2, 6], 125, -1.0, 1.0),
                random_f64(&[2, 3], 126, -1.0, 1.0),
            ],
        )
        .attr("multiples", t(&[2, 1, 2])),
        Sample::new(
            "_GatherGrad",
            vec![
                random_f64(&[4, 3], 127, -1.0, 1.0),
                ints(DType::I64, &[2, 2], &[0, 3, 3, 1]),
                random_f64(&[2, 2, 3], 128, -1.0, 1.0),
            ],
        )
        .attr("axis", i(0)),
        Sample::new(
            "_StridedSliceGrad",
            vec![
                random_f64(&[2, 3], 129, -1.0, 1.0),
                random_f64(&[4, 5], 130, -1.0, 1.0),
            ],
        )
        .attr("begin", t(&[1, 0]))
        .attr("end", t(&[4, 5]))
        .attr("strides", t(&[2, 2])),
    ]
}
