//! Structural primitives. The analyser and the executor give these their
//! meaning (they move values and functions around rather than compute); the
//! schemas here serve docs, completion and argument checking.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::AbsVal;

use crate::infer::InferCall;
use crate::{Category, OpDef, OpError, OutputDef, ParamDef};

fn handled_by_analysis(_: &InferCall) -> Result<AbsVal, OpError> {
    Ok(AbsVal::Any)
}

const fn structural(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    variadic: bool,
) -> OpDef {
    OpDef {
        name,
        category: Category::Structure,
        doc,
        schema: params,
        variadic,
        output: OutputDef::Single,
        infer: handled_by_analysis,
        grad: None,
        kernel: None,
        traits: Traits::NONE,
    }
}

pub const OPS: &[OpDef] = &[
    structural("MakeTuple", "Builds a tuple of its arguments: `MakeTuple(a, b)` is `(a, b)`.", Schema::own(&[]), true),
    structural(
        "TupleGetItem",
        "Element `index` of a tuple: `TupleGetItem(t, 0)` is `t[0]`. The index must be a constant.",
        Schema::own(&[ParamDef::input("tuple", "The tuple."), ParamDef::input("index", "A constant integer index.")]),
        false,
    ),
    structural(
        "Switch",
        "Chooses `true_branch` if `cond` holds, else `false_branch`; calling the result runs only that branch.",
        Schema::own(&[
            ParamDef::input("cond", "A `bool` scalar or a `bool[]` tensor."),
            ParamDef::input("true_branch", "The value (usually a graph) for true."),
            ParamDef::input("false_branch", "The value (usually a graph) for false."),
        ]),
        false,
    ),
    structural(
        "Partial",
        "Binds the first arguments of a function: `Partial(f, a)(b)` is `f(a, b)`.",
        Schema::own_because(&[], "variadic: a function and any number of arguments"),
        true,
    ),
    structural(
        "Depend",
        "Returns `value`, after `expr` has been evaluated (orders side effects).",
        Schema::ms(&[], &[("value", "The result."), ("expr", "Evaluated first.")]),
        false,
    ),
    structural(
        "StopGradient",
        "Returns `x` unchanged; no gradient flows through it.",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The value.")]),
        false,
    ),
    structural("Return", "Returns `x` from the graph (every graph ends with one).", Schema::own(&[ParamDef::input("x", "The value.")]), false),
];
