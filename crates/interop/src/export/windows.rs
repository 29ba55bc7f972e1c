//! The attributes of the 3-D convolutions, the 3-D poolings and the
//! poolings with argmax (forward and backward primitives) as MindSpore 2.10
//! stores them: on top of each `__init__` argument (written as the registry
//! has it), what the constructor adds and its C++ shape inference and CPU
//! kernels read: windows and steps as 5-tuples (`strides`, `dilations`;
//! `(1, 1, h, w)` 4-tuples of the 2-D pools), paddings as 6-tuples
//! (`pad_list`), `groups`, the layout as `format`, the padding mode
//! upper-cased where the constructor does so.

use super::*;

/// `k`, `(d, h, w)` or `(1, 1, d, h, w)` as `(d, h, w)`.
fn three(v: &AttrValue) -> Option<Vec<i64>> {
    let ints = v.as_ints()?;
    Some(match ints.as_slice() {
        [a] => vec![*a; 3],
        [a, b, c] => vec![*a, *b, *c],
        [_, _, a, b, c] => vec![*a, *b, *c],
        _ => return None,
    })
}

/// `(1, 1, d, h, w)` of an int or a triple, or `lead` before the triple.
fn five_with(v: &AttrValue, lead: i64) -> Option<Vec<i64>> {
    let t = three(v)?;
    Some(vec![lead, lead, t[0], t[1], t[2]])
}

/// A padding as 6 ints: `p`, `(d, h, w)` for both sides, or the 6.
fn six(v: &AttrValue) -> Option<Vec<i64>> {
    let ints = v.as_ints()?;
    Some(match ints.as_slice() {
        [p] => vec![*p; 6],
        [a, b, c] => vec![*a, *a, *b, *b, *c, *c],
        [_, _, _, _, _, _] => ints,
        _ => return None,
    })
}

/// The padding a transposed 3-D convolution records in `pad_list`: its
/// `pad` in "pad" mode, `max(0, (k-1)·d + 1 - s)` split half before in
/// "same" mode, none in "valid" mode.
fn transpose_pad_list(mode: &str, pad: &[i64], k: &[i64], s: &[i64], d: &[i64]) -> Vec<i64> {
    match mode {
        "pad" => pad.to_vec(),
        "same" => (0..3)
            .flat_map(|j| {
                let total = ((k[j] - 1) * d[j] + 1 - s[j]).max(0);
                [total / 2, total - total / 2]
            })
            .collect(),
        _ => vec![0; 6],
    }
}

/// The "same" padding of a pooling of `sizes` by windows `k` stepping by
/// `s`: `ceil(n/s)` outputs, the padding they need split half before
/// (rounded down), as the registry's pools and MindSpore's.
fn same_pads(sizes: &[i64], k: &[i64], s: &[i64]) -> Vec<i64> {
    (0..3)
        .flat_map(|j| {
            let out = (sizes[j] + s[j] - 1) / s[j];
            let total = ((out.max(1) - 1) * s[j] + k[j] - sizes[j]).max(0);
            [total / 2, total - total / 2]
        })
        .collect()
}

/// Every attribute of the primitives whose MindSpore schema says too little
/// to write them from (`MaxPoolWithArgmax`, its Python class deprecated, and
/// its gradient): as MindSpore stores them, windows and steps as NHWC
/// 4-tuples `(1, h, w, 1)`, the padding mode upper-cased.
pub(super) fn all_attrs(
    name: &str,
    attr: &dyn Fn(&str) -> Option<AttrValue>,
) -> Option<Result<Vec<AttributeProto>, ExportError>> {
    if !matches!(name, "MaxPoolWithArgmax" | "MaxPoolGradWithArgmax") {
        return None;
    }
    let bad = |what: &str| ExportError::Unsupported(format!("`{name}`'s `{what}` is not valid"));
    let nhwc = |what: &'static str| -> Result<Vec<i64>, ExportError> {
        let v = attr(what)
            .and_then(|v| v.as_ints())
            .ok_or_else(|| bad(what))?;
        Ok(match v.as_slice() {
            [a] => vec![1, *a, *a, 1],
            [a, b] | [1, a, b, 1] => vec![1, *a, *b, 1],
            _ => return Err(bad(what)),
        })
    };
    Some((|| {
        let kernel = nhwc("kernel_size")?;
        let strides = nhwc("strides")?;
        let mode = attr("pad_mode")
            .and_then(|v| v.as_str().map(str::to_ascii_uppercase))
            .ok_or_else(|| bad("pad_mode"))?;
        let mut out = vec![
            ints_attr("kernel_size", &kernel),
            ints_attr("strides", &strides),
            str_attr("pad_mode", &mode),
        ];
        if name == "MaxPoolWithArgmax" {
            out.extend([
                strings_attr("input_names", &["x"]),
                strings_attr("output_names", &["output", "argmax"]),
                ints_attr("ksize", &kernel),
                str_attr("padding", &mode),
                str_attr("data_format", "NCHW"),
                str_attr("format", "NCHW"),
            ]);
        } else {
            out.extend([
                strings_attr("input_names", &["x", "grad", "argmax"]),
                strings_attr("output_names", &["output"]),
            ]);
        }
        Ok(out)
    })())
}

/// The attributes MindSpore stores for `name` beyond (or instead of) its
/// `__init__` arguments; `None` for a primitive not of these families.
/// `dims0` are the sizes of the first input (the pooled input, or the 3-D
/// pools' gradients' shape of it), each where known: "same" padding depends
/// on the spatial ones.
pub(super) fn stored_attrs(
    name: &str,
    attr: &dyn Fn(&str) -> Option<AttrValue>,
    dims0: Option<&[Option<i64>]>,
) -> Option<Result<Vec<AttributeProto>, ExportError>> {
    let family = matches!(
        name,
        "Conv3D"
            | "Conv3DTranspose"
            | "Conv3DBackpropInput"
            | "Conv3DBackpropFilter"
            | "AvgPool3D"
            | "AvgPool3DGrad"
            | "MaxPool3D"
            | "MaxPool3DGrad"
            | "MaxPool3DWithArgmax"
            | "MaxPool3DGradWithArgmax"
            | "MaxPoolWithArgmaxV2"
            | "MaxPoolGradWithArgmaxV2"
    );
    family.then(|| write(name, attr, dims0))
}

fn write(
    name: &str,
    attr: &dyn Fn(&str) -> Option<AttrValue>,
    dims0: Option<&[Option<i64>]>,
) -> Result<Vec<AttributeProto>, ExportError> {
    let bad = |what: &str| ExportError::Unsupported(format!("`{name}`'s `{what}` is not valid"));
    let get = |what: &'static str| attr(what).ok_or_else(|| bad(what));
    let ints = |what: &'static str, f: fn(&AttrValue) -> Option<Vec<i64>>| {
        get(what).and_then(|v| f(&v).ok_or_else(|| bad(what)))
    };
    let string = |what: &'static str| -> Result<String, ExportError> {
        get(what)?
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| bad(what))
    };
    let flag = |what: &'static str| matches!(attr(what), Some(AttrValue::Bool(true)));
    let format = || string("data_format").map(|f| str_attr("format", &f));
    let mut out = Vec::new();
    match name {
        "Conv3D" | "Conv3DBackpropInput" | "Conv3DBackpropFilter" | "Conv3DTranspose" => {
            let stride = ints("stride", |v| five_with(v, 1))?;
            let dilation = ints("dilation", |v| five_with(v, 1))?;
            let pad = ints("pad", six)?;
            let mode = string("pad_mode")?.to_ascii_lowercase();
            out.push(ints_attr("kernel_size", &ints("kernel_size", three)?));
            out.push(ints_attr("strides", &stride));
            out.push(ints_attr("dilations", &dilation));
            out.push(ints_attr("pad", &pad));
            out.push(str_attr("pad_mode", &mode));
            out.push(int_attr(
                "groups",
                get("group")?.as_int().ok_or_else(|| bad("group"))?,
            ));
            out.push(format()?);
            match name {
                "Conv3DTranspose" => {
                    let k = ints("kernel_size", three)?;
                    let list = transpose_pad_list(&mode, &pad, &k, &stride[2..], &dilation[2..]);
                    out.push(ints_attr("pad_list", &list));
                    out.push(ints_attr(
                        "output_padding",
                        &ints("output_padding", |v| five_with(v, 0))?,
                    ));
                }
                "Conv3D" => {
                    if mode != "same" {
                        let list = if mode == "pad" { pad } else { vec![0; 6] };
                        out.push(ints_attr("pad_list", &list));
                    }
                }
                // As MindSpore's bprop sets them: the forward's 5-tuples.
                _ => {
                    out.push(ints_attr("stride", &stride));
                    out.push(ints_attr("dilation", &dilation));
                    out.push(str_attr("data_format", &string("data_format")?));
                }
            }
        }
        "AvgPool3D" | "AvgPool3DGrad" => {
            let kernel = ints("kernel_size", |v| five_with(v, 1))?;
            let strides = ints("strides", |v| five_with(v, 1))?;
            let mode = string("pad_mode")?.to_ascii_uppercase();
            // AvgPool3DGrad's padding: its `pad_list` where given (as
            // MindSpore's bprop sets it), else `pads`.
            let pad = match attr("pad_list")
                .filter(|v| name == "AvgPool3DGrad" && *v != AttrValue::None)
            {
                Some(v) => six(&v).ok_or_else(|| bad("pad_list"))?,
                None => ints(if name == "AvgPool3D" { "pad" } else { "pads" }, six)?,
            };
            let list = match mode.as_str() {
                "PAD" => pad,
                "SAME" => {
                    let spatial: Option<Vec<i64>> = dims0
                        .filter(|d| d.len() == 5)
                        .and_then(|d| d[2..].iter().copied().collect());
                    let spatial = spatial.ok_or_else(|| {
                        ExportError::Unsupported(format!(
                            "`{name}` with pad_mode=\"same\" needs the input's depth, height \
                             and width known (MindSpore stores the padding they give)"
                        ))
                    })?;
                    same_pads(&spatial, &kernel[2..], &strides[2..])
                }
                _ => vec![0; 6],
            };
            out.push(ints_attr("kernel_size", &kernel));
            out.push(ints_attr("strides", &strides));
            out.push(ints_attr("pad_list", &list));
            out.push(str_attr("pad_mode", &mode));
            out.push(format()?);
        }
        "MaxPool3D" | "MaxPool3DGrad" => {
            out.push(ints_attr(
                "kernel_size",
                &ints("kernel_size", |v| five_with(v, 1))?,
            ));
            out.push(ints_attr("strides", &ints("strides", |v| five_with(v, 1))?));
            let mode = match string("pad_mode")?.to_ascii_uppercase().as_str() {
                "PAD" => "CALCULATED".to_string(),
                m => m.to_string(),
            };
            out.push(str_attr("pad_mode", &mode));
            out.push(ints_attr("pad_list", &ints("pad_list", six)?));
            out.push(int_attr("ceil_mode", flag("ceil_mode") as i64));
            out.push(format()?);
        }
        "MaxPool3DWithArgmax" | "MaxPool3DGradWithArgmax" => {
            for what in ["ksize", "strides", "pads", "dilation"] {
                out.push(ints_attr(what, &ints(what, three)?));
            }
            if name == "MaxPool3DWithArgmax" {
                let t = match attr("argmax_type") {
                    Some(AttrValue::DType(DType::I32)) => "int32",
                    _ => "int64",
                };
                out.push(str_attr("argmax_type", t));
            }
            out.push(format()?);
        }
        _ => {
            // MaxPoolWithArgmaxV2 and its gradient: NCHW 4-tuples.
            let kernel = ints("kernel_size", nchw4)?;
            let strides = match attr("strides") {
                None | Some(AttrValue::None) => kernel.clone(),
                Some(v) => nchw4(&v).ok_or_else(|| bad("strides"))?,
            };
            out.push(ints_attr("kernel_size", &kernel));
            out.push(ints_attr("strides", &strides));
            out.push(ints_attr("pads", &ints("pads", nchw4)?));
            out.push(ints_attr("dilation", &ints("dilation", nchw4)?));
            let t = match attr("argmax_type") {
                Some(AttrValue::DType(DType::I32)) => 3,
                _ => 4,
            };
            out.push(int_attr("argmax_type", t));
        }
    }
    Ok(out)
}
