//! CUDA C++ source of every kernel, generated from [`crate::table`] and
//! compiled with NVRTC at run time, one unit (one NVRTC program) at a time,
//! on first use.
//!
//! Storage follows the host tensors ([`tensor::Buffer`]): `f16`/`bf16`/`f32`
//! in `float`, `f64` in `double`, every integer dtype in `long long`, `bool`
//! in `unsigned char`. Kernels take a dtype code `dt` and round (`f16`,
//! `bf16`) or wrap (narrow integers) their results, as the CPU kernels do.
//! Units use no headers, so NVRTC needs nothing but itself.

use tensor::DType;

use crate::table::{Compute, Elementwise};

/// A storage type on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Storage {
    F32,
    F64,
    I64,
    U8,
}

impl Storage {
    pub const ALL: [Storage; 4] = [Storage::F32, Storage::F64, Storage::I64, Storage::U8];

    pub fn of(d: DType) -> Storage {
        match d.storage() {
            DType::F32 => Storage::F32,
            DType::F64 => Storage::F64,
            DType::I64 => Storage::I64,
            _ => Storage::U8,
        }
    }

    pub fn suffix(self) -> &'static str {
        match self {
            Storage::F32 => "f32",
            Storage::F64 => "f64",
            Storage::I64 => "i64",
            Storage::U8 => "u8",
        }
    }

    pub fn c_type(self) -> &'static str {
        match self {
            Storage::F32 => "float",
            Storage::F64 => "double",
            Storage::I64 => "long long",
            Storage::U8 => "unsigned char",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Storage::F32 => 4,
            Storage::F64 | Storage::I64 => 8,
            Storage::U8 => 1,
        }
    }

    /// The unsigned type of the same width (for copies).
    fn word(self) -> &'static str {
        match self.size() {
            4 => "unsigned int",
            8 => "unsigned long long",
            _ => "unsigned char",
        }
    }
}

/// The code kernels take for rounding or wrapping results to `d`.
pub fn dtype_code(d: DType) -> i32 {
    match d {
        DType::F16 => 1,
        DType::BF16 => 2,
        DType::I8 => 3,
        DType::I16 => 4,
        DType::I32 => 5,
        DType::U8 => 6,
        _ => 0,
    }
}

/// [`PRELUDE`], then the formulas' functions and helpers
/// ([`ops::formula::cuda_prelude`]).
pub fn prelude() -> String {
    let mut s = String::from(PRELUDE);
    s.push_str(&ops::formula::cuda_prelude());
    s
}

/// Most dimensions a strided kernel takes (higher ranks run on the CPU).
pub const MAX_RANK: usize = 8;

/// Shared by every unit: types, rounding and wrapping (the formulas' helpers
/// follow it: [`prelude`]).
pub const PRELUDE: &str = r#"
#define MAX_RANK 8
struct Bc { int rank; int same; long long shape[MAX_RANK]; long long sa[MAX_RANK]; long long sb[MAX_RANK]; long long sc[MAX_RANK]; };
struct St { int rank; int pad; long long shape[MAX_RANK]; long long mod[MAX_RANK]; long long ss[MAX_RANK]; long long ds[MAX_RANK]; long long soff; long long doff; };
struct Cv { long long v[16]; };

#define GRID_LOOP(i, n) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)

__device__ __forceinline__ float f_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float round_bf16(float x) {
    if (!isfinite(x)) return x;
    unsigned int b = __float_as_uint(x);
    unsigned int lsb = (b >> 16) & 1u;
    return __uint_as_float((b + 0x7fffu + lsb) & 0xffff0000u);
}
__device__ __forceinline__ float round_f16(float x) {
    if (!isfinite(x)) return x;
    float a = fabsf(x);
    if (a >= 65520.0f) return copysignf(f_inf(), x);
    int e;
    if (a < 6.1035156e-5f) { e = -14; } else { int ex; frexpf(a, &ex); e = ex - 1; }
    double ulp = ldexp(1.0, e - 10);
    double r = rint((double)a / ulp) * ulp;
    return copysignf((float)r, x);
}
__device__ __forceinline__ long long wrap_int(long long x, int dt) {
    switch (dt) {
        case 3: return (long long)(signed char)x;
        case 4: return (long long)(short)x;
        case 5: return (long long)(int)x;
        case 6: return (long long)(unsigned char)x;
        default: return x;
    }
}
__device__ __forceinline__ float nrm(float x, int dt) { return dt == 1 ? round_f16(x) : (dt == 2 ? round_bf16(x) : x); }
__device__ __forceinline__ double nrm(double x, int dt) { return x; }
__device__ __forceinline__ long long nrm(long long x, int dt) { return wrap_int(x, dt); }
__device__ __forceinline__ unsigned char nrm(unsigned char x, int dt) { return x != 0; }
__device__ __forceinline__ long long f2i(double v, int dt) {
    if (dt == 0) {
        return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (long long)v : (-9223372036854775807LL - 1);
    }
    long long w = (v >= -2147483648.0 && v < 2147483648.0) ? (long long)v : -2147483648LL;
    return wrap_int(w, dt);
}
__device__ __forceinline__ long long bc_index(const long long* shape, const long long* st, int rank, long long i) {
    long long off = 0;
    for (int d = rank - 1; d >= 0; --d) { long long c = i % shape[d]; i /= shape[d]; off += c * st[d]; }
    return off;
}
"#;

/// One NVRTC program: a name and its source (prelude included).
#[derive(Debug, Clone)]
pub struct Unit {
    pub name: String,
    pub source: String,
    /// The kernels it defines.
    pub kernels: Vec<String>,
}

/// The unit of an elementwise primitive.
pub fn elementwise_unit_name(op: &str) -> String {
    format!("ew_{op}")
}

/// The kernel of an elementwise primitive for compute storage `s`.
pub fn elementwise_kernel(op: &str, s: Storage) -> String {
    format!("ew_{op}_{}", s.suffix())
}

/// The storage types an elementwise entry has kernels for.
pub fn elementwise_storages(e: &Elementwise) -> Vec<Storage> {
    let mut v = Vec::new();
    if e.float {
        v.extend([Storage::F32, Storage::F64]);
    }
    if e.int {
        v.push(Storage::I64);
    }
    if e.boolean {
        v.push(Storage::U8);
    }
    v
}

fn elementwise_unit(e: &Elementwise) -> Unit {
    let mut src = prelude();
    let mut kernels = Vec::new();
    for s in elementwise_storages(e) {
        let expr = e.expression(s).expect("listed storages have expressions");
        let name = elementwise_kernel(e.op, s);
        let t = s.c_type();
        let out = if e.compute == Compute::Out {
            t
        } else {
            "unsigned char"
        };
        let result = if e.compute == Compute::Out {
            format!("nrm((T)({expr}), dt)")
        } else {
            format!("(O)(({expr}) ? 1 : 0)")
        };
        if e.arity() == 1 {
            src.push_str(&format!(
                "extern \"C\" __global__ void {name}(const {t}* x, {out}* y, long long n, int dt, double p0, double p1) {{\n    typedef {t} T; typedef {out} O; (void)p0; (void)p1;\n    GRID_LOOP(i, n) {{ T a = x[i]; y[i] = {result}; }}\n}}\n"
            ));
        } else {
            src.push_str(&format!(
                "extern \"C\" __global__ void {name}(const {t}* x, const {t}* z, {out}* y, long long n, int dt, double p0, double p1, Bc bc) {{\n    typedef {t} T; typedef {out} O; (void)p0; (void)p1;\n    GRID_LOOP(i, n) {{\n        long long ia = i, ib = i;\n        if (!bc.same) {{ ia = bc_index(bc.shape, bc.sa, bc.rank, i); ib = bc_index(bc.shape, bc.sb, bc.rank, i); }}\n        T a = x[ia]; T b = z[ib]; y[i] = {result};\n    }}\n}}\n"
            ));
        }
        kernels.push(name);
    }
    Unit {
        name: elementwise_unit_name(e.op),
        source: src,
        kernels,
    }
}

/// `cast_<from>_<to>`: MindSpore's `Cast` between storage types.
pub fn cast_kernel(from: Storage, to: Storage) -> String {
    format!("cast_{}_{}", from.suffix(), to.suffix())
}

fn cast_unit() -> Unit {
    let mut src = prelude();
    let mut kernels = Vec::new();
    for from in Storage::ALL {
        for to in Storage::ALL {
            let name = cast_kernel(from, to);
            let body = match (from, to) {
                (_, Storage::U8) => "(unsigned char)(x[i] != 0)".to_string(),
                (Storage::F32 | Storage::F64, Storage::I64) => "f2i((double)x[i], dt)".into(),
                (_, Storage::I64) => "wrap_int((long long)x[i], dt)".into(),
                (_, to) => format!("nrm(({})x[i], dt)", to.c_type()),
            };
            src.push_str(&format!(
                "extern \"C\" __global__ void {name}(const {}* x, {}* y, long long n, int dt) {{\n    GRID_LOOP(i, n) {{ y[i] = {body}; }}\n}}\n",
                from.c_type(),
                to.c_type()
            ));
            kernels.push(name);
        }
    }
    Unit {
        name: "cast".into(),
        source: src,
        kernels,
    }
}

/// A row reduction's combining rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduce {
    Sum,
    Prod,
    Max,
    Min,
    All,
    Any,
}

impl Reduce {
    pub const ALL: [Reduce; 6] = [
        Reduce::Sum,
        Reduce::Prod,
        Reduce::Max,
        Reduce::Min,
        Reduce::All,
        Reduce::Any,
    ];

    fn name(self) -> &'static str {
        match self {
            Reduce::Sum => "sum",
            Reduce::Prod => "prod",
            Reduce::Max => "max",
            Reduce::Min => "min",
            Reduce::All => "all",
            Reduce::Any => "any",
        }
    }

    /// The storage types it has kernels for.
    pub fn storages(self) -> &'static [Storage] {
        match self {
            Reduce::All | Reduce::Any => &[Storage::U8],
            _ => &[Storage::F32, Storage::F64, Storage::I64],
        }
    }

    fn init_and_op(self, s: Storage) -> (&'static str, &'static str) {
        let (lowest, highest) = match s {
            Storage::I64 => ("(-9223372036854775807LL - 1)", "9223372036854775807LL"),
            _ => ("(T)(-f_inf())", "(T)f_inf()"),
        };
        match self {
            Reduce::Sum => ("(T)0", "a + b"),
            Reduce::Prod => ("(T)1", "a * b"),
            Reduce::Max => (lowest, "((a != a || a > b) ? a : b)"),
            Reduce::Min => (highest, "((a != a || a < b) ? a : b)"),
            Reduce::All => ("(T)1", "(T)(a && b)"),
            Reduce::Any => ("(T)0", "(T)(a || b)"),
        }
    }
}

pub fn reduce_kernel(r: Reduce, s: Storage) -> String {
    format!("red_{}_{}", r.name(), s.suffix())
}

/// Threads per block of the row kernels (reductions, softmax, norms).
pub const ROW_THREADS: u32 = 256;

fn block_reduce(op: &str) -> String {
    format!(
        "sh[threadIdx.x] = acc; __syncthreads();\n        for (int s = blockDim.x / 2; s > 0; s >>= 1) {{ if (threadIdx.x < s) {{ T a = sh[threadIdx.x]; T b = sh[threadIdx.x + s]; sh[threadIdx.x] = {op}; }} __syncthreads(); }}\n        acc = sh[0]; __syncthreads();"
    )
}

fn reduce_unit() -> Unit {
    let mut src = prelude();
    let mut kernels = Vec::new();
    for r in Reduce::ALL {
        for &s in r.storages() {
            let name = reduce_kernel(r, s);
            let (init, op) = r.init_and_op(s);
            let t = s.c_type();
            src.push_str(&format!(
                "extern \"C\" __global__ void {name}(const {t}* x, {t}* y, long long rows, long long cols, int dt, double divisor) {{\n    typedef {t} T; __shared__ T sh[{threads}];\n    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {{\n        T acc = {init};\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) {{ T a = acc; T b = x[row * cols + j]; acc = {op}; }}\n        {reduce}\n        if (threadIdx.x == 0) y[row] = nrm(divisor == 1.0 ? acc : (T)(acc / (T)divisor), dt);\n    }}\n}}\n",
                threads = ROW_THREADS,
                reduce = block_reduce(op),
            ));
            kernels.push(name);
        }
    }
    Unit {
        name: "reduce".into(),
        source: src,
        kernels,
    }
}

/// `softmax_<s>` (`logmode` 1: log-softmax) over the last axis of `[rows, cols]`.
pub fn softmax_kernel(s: Storage) -> String {
    format!("softmax_{}", s.suffix())
}

/// `sparse_ce_<s>`: SparseSoftmaxCrossEntropyWithLogits's per-row losses or gradient.
pub fn sparse_ce_kernel(s: Storage) -> String {
    format!("sparse_ce_{}", s.suffix())
}

/// `softmax_grad_<s>`: `y·(dy − Σ dy·y)`, or with `logmode` `dy − exp(y)·Σ dy`.
pub fn softmax_grad_kernel(s: Storage) -> String {
    format!("softmax_grad_{}", s.suffix())
}

/// `layernorm_<s>` and `rmsnorm_<s>` over the last `cols` of `[rows, cols]`.
pub fn norm_kernel(rms: bool, s: Storage) -> String {
    format!(
        "{}_{}",
        if rms { "rmsnorm" } else { "layernorm" },
        s.suffix()
    )
}

/// `layernorm_grad_<s>` (dx, a block per row) and `layernorm_grad_params_<s>`
/// (dgamma, dbeta, a thread per column).
pub fn layer_norm_grad_kernel(params: bool, s: Storage) -> String {
    format!(
        "layernorm_grad{}_{}",
        if params { "_params" } else { "" },
        s.suffix()
    )
}

/// `batchnorm_<s>` (forward) and `batchnorm_grad_<s>`, per channel of NCHW.
pub fn batch_norm_kernel(grad: bool, s: Storage) -> String {
    format!(
        "batchnorm{}_{}",
        if grad { "_grad" } else { "" },
        s.suffix()
    )
}

const FLOATS: [Storage; 2] = [Storage::F32, Storage::F64];

fn row_units() -> Vec<Unit> {
    let max = "((a != a || a > b) ? a : b)";
    let mut soft = prelude();
    let mut soft_k = Vec::new();
    let mut norm = prelude();
    let mut norm_k = Vec::new();
    for s in FLOATS {
        let t = s.c_type();
        let name = softmax_kernel(s);
        soft.push_str(&format!(
            "extern \"C\" __global__ void {name}(const {t}* x, {t}* y, long long rows, long long cols, int logmode, int dt) {{\n    typedef {t} T; __shared__ T sh[{threads}];\n    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {{\n        const T* xr = x + row * cols; T* yr = y + row * cols;\n        T acc = (T)(-f_inf());\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) {{ T a = acc; T b = xr[j]; acc = {max}; }}\n        {r1}\n        T m = acc; acc = (T)0;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += exp(xr[j] - m);\n        {r2}\n        T sum = acc;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = nrm(logmode ? (T)(xr[j] - m - log(sum)) : (T)(exp(xr[j] - m) / sum), dt);\n    }}\n}}\n",
            threads = ROW_THREADS,
            r1 = block_reduce(max),
            r2 = block_reduce("a + b"),
        ));
        soft_k.push(name);
        let name = sparse_ce_kernel(s);
        soft.push_str(&format!(
            "// SparseSoftmaxCrossEntropyWithLogits: per-row losses, or (is_grad) the gradient of their mean.\nextern \"C\" __global__ void {name}(const {t}* x, const long long* labels, {t}* out, long long rows, long long cols, int is_grad, int dt) {{\n    typedef {t} T; __shared__ T sh[{threads}];\n    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {{\n        const T* xr = x + row * cols;\n        T acc = (T)(-f_inf());\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) {{ T a = acc; T b = xr[j]; acc = {max}; }}\n        {r1}\n        T m = acc; acc = (T)0;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += exp(xr[j] - m);\n        {r2}\n        T sum = acc; long long l = labels[row];\n        if (is_grad) {{\n            for (long long j = threadIdx.x; j < cols; j += blockDim.x) out[row * cols + j] = nrm((T)((exp(xr[j] - m) / sum - (j == l ? (T)1 : (T)0)) / (T)rows), dt);\n        }} else if (threadIdx.x == 0) {{\n            out[row] = -(xr[l] - m - log(sum));\n        }}\n    }}\n}}\n",
            threads = ROW_THREADS,
            r1 = block_reduce(max),
            r2 = block_reduce("a + b"),
        ));
        soft_k.push(name);
        let name = softmax_grad_kernel(s);
        soft.push_str(&format!(
            "extern \"C\" __global__ void {name}(const {t}* y, const {t}* dy, {t}* dx, long long rows, long long cols, int logmode, int dt) {{\n    typedef {t} T; __shared__ T sh[{threads}];\n    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {{\n        const T* yr = y + row * cols; const T* gr = dy + row * cols; T* xr = dx + row * cols;\n        T acc = (T)0;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += logmode ? gr[j] : gr[j] * yr[j];\n        {r}\n        T sum = acc;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) xr[j] = nrm(logmode ? (T)(gr[j] - exp(yr[j]) * sum) : (T)(yr[j] * (gr[j] - sum)), dt);\n    }}\n}}\n",
            threads = ROW_THREADS,
            r = block_reduce("a + b"),
        ));
        soft_k.push(name);
        let name = norm_kernel(false, s);
        norm.push_str(&format!(
            "extern \"C\" __global__ void {name}(const {t}* x, const {t}* g, const {t}* bta, {t}* y, {t}* mean_out, {t}* stat_out, long long rows, long long cols, double eps, int rstd_mode, int dt) {{\n    typedef {t} T; __shared__ T sh[{threads}];\n    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {{\n        const T* xr = x + row * cols; T* yr = y + row * cols;\n        T acc = (T)0;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += xr[j];\n        {r}\n        T mean = acc / (T)cols; acc = (T)0;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) {{ T d = xr[j] - mean; acc += d * d; }}\n        {r}\n        T var = acc / (T)cols; T rstd = (T)1 / sqrt(var + (T)eps);\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) {{ T v = (xr[j] - mean) * rstd; if (g) v = v * g[j]; if (bta) v = v + bta[j]; yr[j] = nrm(v, dt); }}\n        if (threadIdx.x == 0) {{ mean_out[row] = nrm(mean, dt); stat_out[row] = nrm(rstd_mode ? rstd : var, dt); }}\n    }}\n}}\n",
            threads = ROW_THREADS,
            r = block_reduce("a + b"),
        ));
        norm_k.push(name);
        let name = norm_kernel(true, s);
        norm.push_str(&format!(
            "extern \"C\" __global__ void {name}(const {t}* x, const {t}* g, {t}* y, {t}* rstd_out, long long rows, long long cols, double eps, int dt) {{\n    typedef {t} T; __shared__ T sh[{threads}];\n    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {{\n        const T* xr = x + row * cols; T* yr = y + row * cols;\n        T acc = (T)0;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += xr[j] * xr[j];\n        {r}\n        T rstd = (T)1 / sqrt(acc / (T)cols + (T)eps);\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = nrm(xr[j] * rstd * g[j], dt);\n        if (threadIdx.x == 0) rstd_out[row] = nrm(rstd, dt);\n    }}\n}}\n",
            threads = ROW_THREADS,
            r = block_reduce("a + b"),
        ));
        norm_k.push(name);
        let name = layer_norm_grad_kernel(false, s);
        norm.push_str(&format!(
            "extern \"C\" __global__ void {name}(const {t}* x, const {t}* dy, const {t}* var, const {t}* mean, const {t}* g, {t}* dx, long long rows, long long cols, double eps, int dt) {{\n    typedef {t} T; __shared__ T sh[{threads}];\n    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {{\n        const T* xr = x + row * cols; const T* gr = dy + row * cols; T* dr = dx + row * cols;\n        T rstd = (T)1 / sqrt(var[row] + (T)eps); T m = mean[row];\n        T acc = (T)0;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += gr[j] * g[j];\n        {r}\n        T mean_g = acc / (T)cols; acc = (T)0;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += gr[j] * g[j] * (xr[j] - m) * rstd;\n        {r}\n        T mean_gx = acc / (T)cols;\n        for (long long j = threadIdx.x; j < cols; j += blockDim.x) dr[j] = nrm((T)(rstd * (gr[j] * g[j] - mean_g - (xr[j] - m) * rstd * mean_gx)), dt);\n    }}\n}}\n",
            threads = ROW_THREADS,
            r = block_reduce("a + b"),
        ));
        norm_k.push(name);
        let name = layer_norm_grad_kernel(true, s);
        norm.push_str(&format!(
            "// dgamma and dbeta: one thread per column, summing down the rows.\nextern \"C\" __global__ void {name}(const {t}* x, const {t}* dy, const {t}* var, const {t}* mean, {t}* dgamma, {t}* dbeta, long long rows, long long cols, double eps, int dt) {{\n    typedef {t} T;\n    GRID_LOOP(j, cols) {{\n        T sg = (T)0, sb = (T)0;\n        for (long long r = 0; r < rows; ++r) {{\n            T rstd = (T)1 / sqrt(var[r] + (T)eps); T d = dy[r * cols + j];\n            sg += d * (x[r * cols + j] - mean[r]) * rstd; sb += d;\n        }}\n        dgamma[j] = nrm(sg, dt); dbeta[j] = nrm(sb, dt);\n    }}\n}}\n"
        ));
        norm_k.push(name);
        // Batch normalisation, one block per channel of [n, ch, hw].
        let cells = "for (long long i = threadIdx.x; i < count; i += blockDim.x) { long long e = ((i / hw) * ch + k) * hw + i % hw;";
        let name = batch_norm_kernel(false, s);
        norm.push_str(&format!(
            "extern \"C\" __global__ void {name}(const {t}* x, const {t}* scale, const {t}* bias, const {t}* mean_in, const {t}* var_in, {t}* y, {t}* mean_out, {t}* var_out, long long n, long long ch, long long hw, double eps, int training, int dt) {{\n    typedef {t} T; __shared__ T sh[{threads}]; long long count = n * hw;\n    for (long long k = blockIdx.x; k < ch; k += gridDim.x) {{\n        T mean = mean_in[k], var = var_in[k];\n        if (training) {{\n            T acc = (T)0;\n            {cells} acc += x[e]; }}\n            {r}\n            mean = acc / (T)count; acc = (T)0;\n            {cells} T d = x[e] - mean; acc += d * d; }}\n            {r}\n            var = acc / (T)count;\n        }}\n        T a = scale[k] / sqrt(var + (T)eps);\n        {cells} y[e] = nrm((T)((x[e] - mean) * a + bias[k]), dt); }}\n        if (threadIdx.x == 0) {{ mean_out[k] = nrm(mean, dt); var_out[k] = nrm(var, dt); }}\n    }}\n}}\n",
            threads = ROW_THREADS,
            r = block_reduce("a + b"),
        ));
        norm_k.push(name);
        let name = batch_norm_kernel(true, s);
        norm.push_str(&format!(
            "extern \"C\" __global__ void {name}(const {t}* dy, const {t}* x, const {t}* scale, const {t}* mean, const {t}* var, {t}* dx, {t}* dscale, {t}* dbias, long long n, long long ch, long long hw, double eps, int training, int dt) {{\n    typedef {t} T; __shared__ T sh[{threads}]; long long count = n * hw;\n    for (long long k = blockIdx.x; k < ch; k += gridDim.x) {{\n        T rstd = (T)1 / sqrt(var[k] + (T)eps); T m = mean[k];\n        T acc = (T)0;\n        {cells} acc += dy[e]; }}\n        {r}\n        T sum_dy = acc; acc = (T)0;\n        {cells} acc += dy[e] * (x[e] - m) * rstd; }}\n        {r}\n        T sum_dy_xhat = acc;\n        {cells} T xhat = (x[e] - m) * rstd; dx[e] = nrm(training ? (T)(scale[k] * rstd * (dy[e] - sum_dy / (T)count - xhat * sum_dy_xhat / (T)count)) : (T)(scale[k] * rstd * dy[e]), dt); }}\n        if (threadIdx.x == 0) {{ dscale[k] = nrm(sum_dy_xhat, dt); dbias[k] = nrm(sum_dy, dt); }}\n    }}\n}}\n",
            threads = ROW_THREADS,
            r = block_reduce("a + b"),
        ));
        norm_k.push(name);
    }
    vec![
        Unit {
            name: "softmax".into(),
            source: soft,
            kernels: soft_k,
        },
        Unit {
            name: "norm".into(),
            source: norm,
            kernels: norm_k,
        },
    ]
}

/// `copy_<width>`: a strided copy (transpose, broadcast, tile, slice, concat).
pub fn copy_kernel(s: Storage) -> String {
    format!("copy_w{}", s.size())
}

/// `gather_<width>`: `out[o, j, i] = params[o, idx[j], i]`.
pub fn gather_kernel(s: Storage) -> String {
    format!("gather_w{}", s.size())
}

/// `select_<width>`: `y = c ? x : z`, broadcasting.
pub fn select_kernel(s: Storage) -> String {
    format!("select_w{}", s.size())
}

/// `im2col_<s>`: the column matrix of a convolution.
pub fn im2col_kernel(s: Storage) -> String {
    format!("im2col_{}", s.suffix())
}

/// `pool_<s>`: 2-D max or average pooling (NCHW).
pub fn pool_kernel(s: Storage) -> String {
    format!("pool_{}", s.suffix())
}

/// `poolgrad_<s>`: the gradient of 2-D max or average pooling (NCHW).
pub fn pool_grad_kernel(s: Storage) -> String {
    format!("poolgrad_{}", s.suffix())
}

/// `gconv_<s>`: a grouped (depthwise, say) convolution computed directly.
pub fn grouped_conv_kernel(s: Storage) -> String {
    format!("gconv_{}", s.suffix())
}

/// `col2im_<s>`: the adjoint of [`im2col_kernel`] (a convolution's input gradient).
pub fn col2im_kernel(s: Storage) -> String {
    format!("col2im_{}", s.suffix())
}

fn data_units() -> Vec<Unit> {
    let mut copy = prelude();
    let mut copy_k = Vec::new();
    for s in [Storage::U8, Storage::F32, Storage::F64] {
        let w = s.word();
        let (c, g, sel) = (copy_kernel(s), gather_kernel(s), select_kernel(s));
        copy.push_str(&format!(
            "extern \"C\" __global__ void {c}(const {w}* src, {w}* dst, long long n, St st) {{\n    GRID_LOOP(i, n) {{\n        long long r = i, so = st.soff, d = st.doff;\n        for (int k = st.rank - 1; k >= 0; --k) {{ long long q = r % st.shape[k]; r /= st.shape[k]; so += (q % st.mod[k]) * st.ss[k]; d += q * st.ds[k]; }}\n        dst[d] = src[so];\n    }}\n}}\n\
extern \"C\" __global__ void {g}(const {w}* p, const long long* idx, {w}* out, long long axis, long long inner, long long nidx, long long n) {{\n    GRID_LOOP(i, n) {{\n        long long in = i % inner; long long t = i / inner; long long j = t % nidx; long long o = t / nidx;\n        long long k = idx[j]; if (k < 0) k += axis;\n        out[i] = (k >= 0 && k < axis) ? p[(o * axis + k) * inner + in] : ({w})0;\n    }}\n}}\n\
extern \"C\" __global__ void {sel}(const unsigned char* c, const {w}* x, const {w}* z, {w}* y, long long n, Bc bc) {{\n    GRID_LOOP(i, n) {{\n        long long ic = i, ia = i, ib = i;\n        if (!bc.same) {{ ic = bc_index(bc.shape, bc.sa, bc.rank, i); ia = bc_index(bc.shape, bc.sb, bc.rank, i); ib = bc_index(bc.shape, bc.sc, bc.rank, i); }}\n        y[i] = c[ic] ? x[ia] : z[ib];\n    }}\n}}\n"
        ));
        copy_k.extend([c, g, sel]);
    }
    let mut conv = prelude();
    let mut conv_k = Vec::new();
    for s in FLOATS {
        let t = s.c_type();
        let name = im2col_kernel(s);
        conv.push_str(&format!(
            "// cv: N C H W kh kw sh sw pt pl dh dw OH OW\nextern \"C\" __global__ void {name}(const {t}* x, {t}* col, long long n, Cv cv) {{\n    long long C = cv.v[1], H = cv.v[2], W = cv.v[3], kh = cv.v[4], kw = cv.v[5];\n    long long sh = cv.v[6], sw = cv.v[7], pt = cv.v[8], pl = cv.v[9], dh = cv.v[10], dw = cv.v[11], OH = cv.v[12], OW = cv.v[13];\n    GRID_LOOP(i, n) {{\n        long long ow = i % OW; long long t = i / OW; long long oh = t % OH; t /= OH;\n        long long kj = t % kw; t /= kw; long long ki = t % kh; t /= kh; long long c = t % C; long long b = t / C;\n        long long h = oh * sh - pt + ki * dh, w = ow * sw - pl + kj * dw;\n        col[i] = (h >= 0 && h < H && w >= 0 && w < W) ? x[((b * C + c) * H + h) * W + w] : ({t})0;\n    }}\n}}\n"
        ));
        conv_k.push(name);
        let name = pool_kernel(s);
        conv.push_str(&format!(
            "// cv: planes H W kh kw sh sw OH OW pt pl. Max or (avg) mean of each window clipped to the image.\nextern \"C\" __global__ void {name}(const {t}* x, {t}* y, long long n, Cv cv, int avg, int dt) {{\n    long long H = cv.v[1], W = cv.v[2], kh = cv.v[3], kw = cv.v[4], sh = cv.v[5], sw = cv.v[6], OH = cv.v[7], OW = cv.v[8], pt = cv.v[9], pl = cv.v[10];\n    GRID_LOOP(i, n) {{\n        long long ox = i % OW; long long t = i / OW; long long oy = t % OH; long long p = t / OH;\n        long long y0 = oy * sh - pt, x0 = ox * sw - pl;\n        long long ylo = y0 < 0 ? 0 : y0, xlo = x0 < 0 ? 0 : x0;\n        long long yhi = y0 + kh < 0 ? 0 : (y0 + kh > H ? H : y0 + kh); if (yhi < ylo) yhi = ylo;\n        long long xhi = x0 + kw < 0 ? 0 : (x0 + kw > W ? W : x0 + kw); if (xhi < xlo) xhi = xlo;\n        const {t}* plane = x + p * H * W;\n        {t} m = avg ? ({t})0 : ({t})(-f_inf());\n        for (long long iy = ylo; iy < yhi; ++iy) for (long long ix = xlo; ix < xhi; ++ix) {{ {t} v = plane[iy * W + ix]; if (avg) m += v; else if (v > m) m = v; }}\n        long long count = (yhi - ylo) * (xhi - xlo);\n        y[i] = nrm(avg ? (count > 0 ? ({t})(m / ({t})count) : ({t})0) : m, dt);\n    }}\n}}\n"
        ));
        conv_k.push(name);
        let name = grouped_conv_kernel(s);
        conv.push_str(&format!(
            "// cv as im2col_, then OC and the group count. A thread per output cell: a group's GEMM\n// would be tiny (depthwise: one channel), so each output sums its window directly.\nextern \"C\" __global__ void {name}(const {t}* x, const {t}* wt, {t}* y, long long n, Cv cv) {{\n    long long C = cv.v[1], H = cv.v[2], W = cv.v[3], kh = cv.v[4], kw = cv.v[5];\n    long long sh = cv.v[6], sw = cv.v[7], pt = cv.v[8], pl = cv.v[9], dh = cv.v[10], dw = cv.v[11], OH = cv.v[12], OW = cv.v[13];\n    long long OC = cv.v[14], G = cv.v[15], Cg = C / G, OCg = OC / G;\n    GRID_LOOP(i, n) {{\n        long long ow = i % OW; long long t = i / OW; long long oh = t % OH; t /= OH; long long oc = t % OC; long long b = t / OC;\n        long long c0 = (oc / OCg) * Cg;\n        {t} acc = ({t})0;\n        for (long long ci = 0; ci < Cg; ++ci) {{\n            const {t}* plane = x + ((b * C + c0 + ci) * H) * W;\n            const {t}* k = wt + (oc * Cg + ci) * kh * kw;\n            for (long long ki = 0; ki < kh; ++ki) {{\n                long long h = oh * sh - pt + ki * dh;\n                if (h < 0 || h >= H) continue;\n                for (long long kj = 0; kj < kw; ++kj) {{\n                    long long w = ow * sw - pl + kj * dw;\n                    if (w >= 0 && w < W) acc += plane[h * W + w] * k[ki * kw + kj];\n                }}\n            }}\n        }}\n        y[i] = acc;\n    }}\n}}\n"
        ));
        conv_k.push(name);
        let name = pool_grad_kernel(s);
        conv.push_str(&format!(
            "// cv as pool_. One thread per input cell, summing (in window order, as the CPU) the\n// gradients of the windows that hold it: of those whose first maximum it is (max), or\n// each window's share (avg). No atomics, so the sums are deterministic.\nextern \"C\" __global__ void {name}(const {t}* x, const {t}* dout, {t}* dx, long long n, Cv cv, int avg, int dt) {{\n    long long H = cv.v[1], W = cv.v[2], kh = cv.v[3], kw = cv.v[4], sh = cv.v[5], sw = cv.v[6], OH = cv.v[7], OW = cv.v[8], pt = cv.v[9], pl = cv.v[10];\n    GRID_LOOP(i, n) {{\n        long long ix = i % W; long long t = i / W; long long iy = t % H; long long p = t / H;\n        long long oylo = iy + pt - kh + 1; oylo = oylo <= 0 ? 0 : (oylo + sh - 1) / sh;\n        long long oyhi = (iy + pt) / sh; if (oyhi > OH - 1) oyhi = OH - 1;\n        long long oxlo = ix + pl - kw + 1; oxlo = oxlo <= 0 ? 0 : (oxlo + sw - 1) / sw;\n        long long oxhi = (ix + pl) / sw; if (oxhi > OW - 1) oxhi = OW - 1;\n        const {t}* plane = x + p * H * W;\n        {t} acc = ({t})0;\n        for (long long oy = oylo; oy <= oyhi; ++oy) for (long long ox = oxlo; ox <= oxhi; ++ox) {{\n            long long y0 = oy * sh - pt, x0 = ox * sw - pl;\n            long long ylo = y0 < 0 ? 0 : y0, xlo = x0 < 0 ? 0 : x0;\n            long long yhi = y0 + kh > H ? H : y0 + kh, xhi = x0 + kw > W ? W : x0 + kw;\n            if (yhi <= ylo || xhi <= xlo) continue;\n            {t} g = dout[(p * OH + oy) * OW + ox];\n            if (avg) {{ acc += g / ({t})((yhi - ylo) * (xhi - xlo)); continue; }}\n            long long best = ylo * W + xlo; {t} bv = plane[best];\n            for (long long yy = ylo; yy < yhi; ++yy) for (long long xx = xlo; xx < xhi; ++xx) {{ {t} v = plane[yy * W + xx]; if (v > bv) {{ bv = v; best = yy * W + xx; }} }}\n            if (best == iy * W + ix) acc += g;\n        }}\n        dx[i] = nrm(acc, dt);\n    }}\n}}\n"
        ));
        conv_k.push(name);
        let name = col2im_kernel(s);
        conv.push_str(&format!(
            "// The adjoint of im2col: every input cell sums the column entries it fed.\nextern \"C\" __global__ void {name}(const {t}* col, {t}* dx, long long n, Cv cv) {{\n    long long C = cv.v[1], H = cv.v[2], W = cv.v[3], kh = cv.v[4], kw = cv.v[5];\n    long long sh = cv.v[6], sw = cv.v[7], pt = cv.v[8], pl = cv.v[9], dh = cv.v[10], dw = cv.v[11], OH = cv.v[12], OW = cv.v[13];\n    long long L = OH * OW;\n    GRID_LOOP(i, n) {{\n        long long w = i % W; long long t = i / W; long long h = t % H; t /= H; long long c = t % C; long long b = t / C;\n        {t} acc = ({t})0;\n        for (long long ki = 0; ki < kh; ++ki) {{\n            long long hh = h + pt - ki * dh;\n            if (hh < 0 || hh % sh != 0 || hh / sh >= OH) continue;\n            for (long long kj = 0; kj < kw; ++kj) {{\n                long long ww = w + pl - kj * dw;\n                if (ww < 0 || ww % sw != 0 || ww / sw >= OW) continue;\n                acc += col[((b * C + c) * kh * kw + ki * kw + kj) * L + (hh / sh) * OW + ww / sw];\n            }}\n        }}\n        dx[i] = acc;\n    }}\n}}\n"
        ));
        conv_k.push(name);
    }
    vec![
        Unit {
            name: "copy".into(),
            source: copy,
            kernels: copy_k,
        },
        Unit {
            name: "conv".into(),
            source: conv,
            kernels: conv_k,
        },
    ]
}

/// The optimizers' updates, computed in double as the CPU kernels do (then
/// rounded to the weight's dtype). A read-only input may be one element
/// (stride 0); the written ones have the weight's size.
const OPTIM: &str = r#"
extern "C" __global__ void momentum_$S(const $T* w, const $T* a, const $T* g, long long sg, $T* ow, $T* oa, long long n, double lr, double mom, double scale, int nesterov, int dt) {
    GRID_LOOP(i, n) {
        double grad = (double)g[i * sg] * scale;
        double acc = (double)a[i] * mom + grad;
        double wi = (double)w[i];
        if (nesterov) wi -= grad * lr + acc * mom * lr; else wi -= lr * acc;
        ow[i] = nrm(($T)wi, dt); oa[i] = nrm(($T)acc, dt);
    }
}
extern "C" __global__ void sgd_$S(const $T* w, const $T* g, long long sg, const $T* a, const $T* st, $T* ow, $T* oa, $T* ost, long long n, double lr, double mom, double damp, double wd, int nesterov, int dt) {
    GRID_LOOP(i, n) {
        double wi = (double)w[i], grad = (double)g[i * sg], acc = (double)a[i], stat = (double)st[i];
        if (wd != 0.0) grad += wi * wd;
        if (mom != 0.0) {
            if (stat > 0.0) { acc = grad; stat = 0.0; } else acc = acc * mom + (1.0 - damp) * grad;
            grad = nesterov ? grad + mom * acc : acc;
        }
        wi -= lr * grad;
        ow[i] = nrm(($T)wi, dt); oa[i] = nrm(($T)acc, dt); ost[i] = nrm(($T)stat, dt);
    }
}
extern "C" __global__ void adam_$S(const $T* w, const $T* m, const $T* v, const $T* g, long long sg, $T* ow, $T* om, $T* ov, long long n, double lr_t, double b1, double b2, double eps, int nesterov, int dt) {
    GRID_LOOP(i, n) {
        double gi = (double)g[i * sg], mi = (double)m[i], vi = (double)v[i];
        mi += (gi - mi) * (1.0 - b1);
        vi += (gi * gi - vi) * (1.0 - b2);
        double num = nesterov ? mi * b1 + (1.0 - b1) * gi : mi;
        double wi = (double)w[i] - lr_t * num / (sqrt(vi) + eps);
        ow[i] = nrm(($T)wi, dt); om[i] = nrm(($T)mi, dt); ov[i] = nrm(($T)vi, dt);
    }
}
"#;

/// `NAME_<s>`: optimizer `name` (`momentum`, `sgd`, `adam`) for storage `s`.
pub fn optim_kernel(name: &str, s: Storage) -> String {
    format!("{name}_{}", s.suffix())
}

fn optim_unit() -> Unit {
    let mut source = prelude();
    let mut kernels = Vec::new();
    for s in FLOATS {
        source.push_str(&OPTIM.replace("$T", s.c_type()).replace("$S", s.suffix()));
        kernels.extend(["momentum", "sgd", "adam"].map(|k| optim_kernel(k, s)));
    }
    Unit {
        name: "optim".into(),
        source,
        kernels,
    }
}

/// Every unit: one per elementwise primitive, then the structured families.
pub fn all_units() -> Vec<Unit> {
    let mut units: Vec<Unit> = crate::table::elementwise_ops()
        .iter()
        .map(elementwise_unit)
        .collect();
    units.push(cast_unit());
    units.push(reduce_unit());
    units.extend(row_units());
    units.extend(data_units());
    units.push(optim_unit());
    units
}

/// The unit called `name`.
pub fn unit(name: &str) -> Option<Unit> {
    if let Some(op) = name.strip_prefix("ew_") {
        return crate::table::elementwise(op).map(elementwise_unit);
    }
    all_units().into_iter().find(|u| u.name == name)
}
