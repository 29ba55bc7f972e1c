//! Elementwise formulas: an elementwise op's math, written once in its record.
//!
//! A formula is one expression over the inputs `a`, `b` and the attribute
//! values `p0`, `p1`, in a small syntax that is both Rust and CUDA C++:
//! float literals, `+ - * /`, unary minus, and calls of the functions in
//! [`fns`] (`exp log sqrt tanh erf fabs ...`, `select(cond, x, y)`, the tests
//! `gt ge lt le eq ne`, `both either`) and of the helpers defined with
//! [`helper!`] (`sigm`, `softplus_`, `gelu_slope_`, `silu_slope_`). The
//! [`formula!`] macro expands it to
//!
//! - element functions and slice kernels monomorphised for `f32` and `f64`
//!   (the registry's kernel, the compiled plans' fused loops), and
//! - its text ([`Formula::source`], by `stringify!`), which
//!   [`Formula::cuda`] turns into the GPU's CUDA expression (literals cast
//!   to the compute type `T`, so `float` kernels do not promote to `double`).
//!
//! A *wide* formula computes `f32` inputs in `f64` and rounds the result, as
//! most of the registry's activation kernels do; its `f32` kernels are the
//! `f64` ones with a conversion on each side (the GPU computes it in `T`).
//! A *test* formula gives a bool (comparisons); its kernels write 1 or 0.
//!
//! The op's record holds the formula in [`crate::Traits::formula`]; the
//! backends find it there, never by the op's name.

pub use crate::defs::elementwise::math::{erfc, erfinv};
pub use crate::defs::elementwise::{erf, erf_f32, tanh_f32};

/// Slice kernel: `out[i] = f(a[i], b[i], p0, p1)` (`b` is not read by unary
/// formulas and may be empty); `p` holds the attribute values, `p0` first.
pub type Slice<T> = fn(&[T], &[T], &[f64], &mut [T]);
/// Element function: `f(a, b, p0, p1)`.
pub type Elem<T> = fn(T, T, T, T) -> T;

/// An elementwise op's formula (see the module documentation).
#[derive(Clone, Copy)]
pub struct Formula {
    /// 1 or 2: the inputs `a` (and `b`) the expression reads.
    pub arity: usize,
    /// The result is a bool (the kernels give 1 or 0).
    pub test: bool,
    /// `f32` inputs are computed in `f64` and rounded.
    pub wide: bool,
    /// The attributes read as `p0`, `p1`, in order.
    pub params: &'static [&'static str],
    /// It holds on integers as written (wrapping), so an integer call
    /// computes in its own dtype rather than in a float one.
    pub ints: bool,
    /// It holds on bools (0 and 1).
    pub bools: bool,
    /// It reads its inputs as truth values (logical ops): it computes on
    /// bools only.
    pub logic: bool,
    /// The expression as written (Rust and CUDA syntax).
    pub source: &'static str,
    /// The expression for integer inputs where it differs from `source` in
    /// meaning (`fabs` is a float function), for the GPU's integer and bool
    /// kernels; the registry's integer kernels are its own (they wrap).
    pub int_source: Option<&'static str>,
    /// A named function the formula calls that is not an expression (its
    /// Rust and CUDA definitions are written once each): `erfinv`.
    pub named: Option<&'static str>,
    /// The Rust kernels of a float formula; `None` for an integer-only one.
    pub float: Option<Kernels>,
    /// The Rust function of an integer-only formula (`a & b`).
    pub int: Option<Elem<i64>>,
}

/// A float formula's generated Rust.
#[derive(Clone, Copy)]
pub struct Kernels {
    pub e32: Elem<f32>,
    pub e64: Elem<f64>,
    pub f32: Slice<f32>,
    pub f64: Slice<f64>,
}

impl std::fmt::Debug for Formula {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Formula({})", self.source)
    }
}

impl PartialEq for Formula {
    fn eq(&self, other: &Formula) -> bool {
        self.source == other.source
            && self.arity == other.arity
            && self.test == other.test
            && self.wide == other.wide
            && self.params == other.params
    }
}

impl Eq for Formula {}

impl Formula {
    /// The float kernels (of a formula over floats: [`Formula::float`]).
    #[inline(always)]
    pub fn kernels(&self) -> &Kernels {
        match &self.float {
            Some(k) => k,
            None => panic!("`{}` is an integer formula", self.source),
        }
    }

    /// The unary formula at `x` in `f32` (attributes `p`).
    #[inline(always)]
    pub fn un32(&self, x: f32, p: &[f64]) -> f32 {
        (self.kernels().e32)(x, 0.0, param(p, 0) as f32, param(p, 1) as f32)
    }

    /// The unary formula at `x` in `f64`.
    #[inline(always)]
    pub fn un64(&self, x: f64, p: &[f64]) -> f64 {
        (self.kernels().e64)(x, 0.0, param(p, 0), param(p, 1))
    }

    /// The binary formula at `(x, y)` in `f32`.
    #[inline(always)]
    pub fn bin32(&self, x: f32, y: f32, p: &[f64]) -> f32 {
        (self.kernels().e32)(x, y, param(p, 0) as f32, param(p, 1) as f32)
    }

    /// The binary formula at `(x, y)` in `f64`.
    #[inline(always)]
    pub fn bin64(&self, x: f64, y: f64, p: &[f64]) -> f64 {
        (self.kernels().e64)(x, y, param(p, 0), param(p, 1))
    }

    /// An integer-only formula at `(x, y)`.
    #[inline(always)]
    pub fn int(&self, x: i64, y: i64) -> i64 {
        match self.int {
            Some(f) => f(x, y, 0, 0),
            None => panic!("`{}` is a float formula", self.source),
        }
    }

    /// The CUDA expression for float compute types `T`: `source` with every
    /// numeric literal and `p0`/`p1` cast to `(T)`.
    pub fn cuda(&self) -> String {
        cuda_text(self.source)
    }

    /// The CUDA expression for `long long` and `unsigned char` (integer and
    /// bool storage): `int_source` where it is given, else `source`.
    pub fn cuda_int(&self) -> String {
        cuda_text(self.int_source.unwrap_or(self.source))
    }
}

/// Attribute `i` of `p` (0 when absent).
#[inline(always)]
pub fn param(p: &[f64], i: usize) -> f64 {
    p.get(i).copied().unwrap_or(0.0)
}

/// `text` with numeric literals and `p0`/`p1` cast to `(T)` (see
/// [`Formula::cuda`]); identifiers containing digits are left alone.
pub fn cuda_text(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            if word == "p0" || word == "p1" {
                out.push_str("(T)");
            }
            out.push_str(word);
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() {
                let d = b[i];
                let exp_sign = (d == b'-' || d == b'+') && matches!(b[i - 1], b'e' | b'E');
                if d.is_ascii_digit() || d == b'.' || d == b'e' || d == b'E' || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push_str("(T)");
            out.push_str(&text[start..i]);
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

/// The float types formulas are monomorphised for, with the math functions
/// as the registry computes them (`tanh` and `erf` in `f32` are the
/// registry's own vectorisable approximations).
pub trait Real:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    fn exp(self) -> Self;
    fn log(self) -> Self;
    fn sqrt(self) -> Self;
    fn tanh(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn erf(self) -> Self;
    fn fabs(self) -> Self;
    fn expm1(self) -> Self;
    fn log1p(self) -> Self;
    fn exp2(self) -> Self;
    fn log2(self) -> Self;
    fn log10(self) -> Self;
    fn tan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn erfc(self) -> Self;
    fn erfinv(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn trunc(self) -> Self;
    fn rint(self) -> Self;
    fn pow(self, y: Self) -> Self;
    fn atan2(self, y: Self) -> Self;
    fn hypot(self, y: Self) -> Self;
    fn isnan(self) -> bool;
    fn isinf(self) -> bool;
    fn isfinite(self) -> bool;
}

/// The [`Real`] methods that are the standard library's of the same type.
macro_rules! std_math {
    ($t:ident) => {
        #[inline(always)]
        fn exp2(self) -> $t {
            $t::exp2(self)
        }
        #[inline(always)]
        fn log2(self) -> $t {
            $t::log2(self)
        }
        #[inline(always)]
        fn log10(self) -> $t {
            $t::log10(self)
        }
        #[inline(always)]
        fn tan(self) -> $t {
            $t::tan(self)
        }
        #[inline(always)]
        fn sinh(self) -> $t {
            $t::sinh(self)
        }
        #[inline(always)]
        fn cosh(self) -> $t {
            $t::cosh(self)
        }
        #[inline(always)]
        fn asin(self) -> $t {
            $t::asin(self)
        }
        #[inline(always)]
        fn acos(self) -> $t {
            $t::acos(self)
        }
        #[inline(always)]
        fn atan(self) -> $t {
            $t::atan(self)
        }
        #[inline(always)]
        fn asinh(self) -> $t {
            $t::asinh(self)
        }
        #[inline(always)]
        fn acosh(self) -> $t {
            $t::acosh(self)
        }
        #[inline(always)]
        fn atanh(self) -> $t {
            $t::atanh(self)
        }
        #[inline(always)]
        fn floor(self) -> $t {
            $t::floor(self)
        }
        #[inline(always)]
        fn ceil(self) -> $t {
            $t::ceil(self)
        }
        #[inline(always)]
        fn trunc(self) -> $t {
            $t::trunc(self)
        }
        #[inline(always)]
        fn rint(self) -> $t {
            $t::round_ties_even(self)
        }
        #[inline(always)]
        fn pow(self, y: $t) -> $t {
            $t::powf(self, y)
        }
        #[inline(always)]
        fn atan2(self, y: $t) -> $t {
            $t::atan2(self, y)
        }
        #[inline(always)]
        fn hypot(self, y: $t) -> $t {
            $t::hypot(self, y)
        }
        #[inline(always)]
        fn isnan(self) -> bool {
            $t::is_nan(self)
        }
        #[inline(always)]
        fn isinf(self) -> bool {
            $t::is_infinite(self)
        }
        #[inline(always)]
        fn isfinite(self) -> bool {
            $t::is_finite(self)
        }
    };
}

impl Real for f32 {
    #[inline(always)]
    fn exp(self) -> f32 {
        f32::exp(self)
    }
    #[inline(always)]
    fn log(self) -> f32 {
        f32::ln(self)
    }
    #[inline(always)]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn tanh(self) -> f32 {
        tanh_f32(self)
    }
    #[inline(always)]
    fn sin(self) -> f32 {
        f32::sin(self)
    }
    #[inline(always)]
    fn cos(self) -> f32 {
        f32::cos(self)
    }
    #[inline(always)]
    fn erf(self) -> f32 {
        erf_f32(self)
    }
    #[inline(always)]
    fn fabs(self) -> f32 {
        f32::abs(self)
    }
    #[inline(always)]
    fn expm1(self) -> f32 {
        f32::exp_m1(self)
    }
    #[inline(always)]
    fn log1p(self) -> f32 {
        f32::ln_1p(self)
    }
    /// In f64, rounded (the registry's `erfc` is an f64 function).
    #[inline(always)]
    fn erfc(self) -> f32 {
        erfc(self as f64) as f32
    }
    /// In f64, rounded (the registry's `erfinv` is an f64 function).
    #[inline(always)]
    fn erfinv(self) -> f32 {
        erfinv(self as f64) as f32
    }
    std_math!(f32);
}

impl Real for f64 {
    #[inline(always)]
    fn exp(self) -> f64 {
        f64::exp(self)
    }
    #[inline(always)]
    fn log(self) -> f64 {
        f64::ln(self)
    }
    #[inline(always)]
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn tanh(self) -> f64 {
        f64::tanh(self)
    }
    #[inline(always)]
    fn sin(self) -> f64 {
        f64::sin(self)
    }
    #[inline(always)]
    fn cos(self) -> f64 {
        f64::cos(self)
    }
    #[inline(always)]
    fn erf(self) -> f64 {
        erf(self)
    }
    #[inline(always)]
    fn fabs(self) -> f64 {
        f64::abs(self)
    }
    #[inline(always)]
    fn expm1(self) -> f64 {
        f64::exp_m1(self)
    }
    #[inline(always)]
    fn log1p(self) -> f64 {
        f64::ln_1p(self)
    }
    #[inline(always)]
    fn erfc(self) -> f64 {
        erfc(self)
    }
    #[inline(always)]
    fn erfinv(self) -> f64 {
        erfinv(self)
    }
    std_math!(f64);
}

/// The functions a formula may call. Each name is also CUDA's: the math
/// functions are CUDA's own (overloaded for `float` and `double`; `erfinv`
/// is the one a formula calls that is not an expression in Rust either: the
/// registry's iteration, [`erfinv`], and CUDA's `erfinv`), the others are
/// defined in the prelude [`cuda_prelude`] generates.
pub mod fns {
    pub use super::helpers::*;
    use super::Real;

    macro_rules! math {
        ($($f:ident),*) => {$(
            #[inline(always)]
            pub fn $f<T: Real>(x: T) -> T {
                x.$f()
            }
        )*};
    }
    math!(exp, log, sqrt, tanh, sin, cos, erf, fabs, expm1, log1p);
    math!(exp2, log2, log10, tan, sinh, cosh, asin, acos, atan, asinh, acosh, atanh);
    math!(erfc, erfinv, floor, ceil, trunc, rint);

    macro_rules! math2 {
        ($($f:ident),*) => {$(
            #[inline(always)]
            pub fn $f<T: Real>(x: T, y: T) -> T {
                x.$f(y)
            }
        )*};
    }
    math2!(pow, atan2, hypot);

    macro_rules! class {
        ($($f:ident),*) => {$(
            #[inline(always)]
            pub fn $f<T: Real>(x: T) -> bool {
                x.$f()
            }
        )*};
    }
    class!(isnan, isinf, isfinite);

    /// Bitwise NOT of an integer (CUDA: `~x`; of a bool, `!x`).
    #[inline(always)]
    pub fn bnot(x: i64) -> i64 {
        !x
    }

    /// `c ? x : y`.
    #[inline(always)]
    pub fn select<T>(c: bool, x: T, y: T) -> T {
        if c {
            x
        } else {
            y
        }
    }

    macro_rules! test {
        ($($f:ident $op:tt),*) => {$(
            #[inline(always)]
            pub fn $f<T: PartialOrd>(x: T, y: T) -> bool {
                x $op y
            }
        )*};
    }
    test!(gt >, ge >=, lt <, le <=, eq ==, ne !=);

    /// `p && q`.
    #[inline(always)]
    pub fn both(p: bool, q: bool) -> bool {
        p && q
    }

    /// `p || q`.
    #[inline(always)]
    pub fn either(p: bool, q: bool) -> bool {
        p || q
    }
}

/// The CUDA definitions of the non-math functions in [`fns`].
const CUDA_FNS: &str = "\
template <class T> __device__ __forceinline__ T select(bool c, T x, T y) { return c ? x : y; }
template <class T> __device__ __forceinline__ bool gt(T x, T y) { return x > y; }
template <class T> __device__ __forceinline__ bool ge(T x, T y) { return x >= y; }
template <class T> __device__ __forceinline__ bool lt(T x, T y) { return x < y; }
template <class T> __device__ __forceinline__ bool le(T x, T y) { return x <= y; }
template <class T> __device__ __forceinline__ bool eq(T x, T y) { return x == y; }
template <class T> __device__ __forceinline__ bool ne(T x, T y) { return x != y; }
__device__ __forceinline__ bool both(bool p, bool q) { return p && q; }
__device__ __forceinline__ bool either(bool p, bool q) { return p || q; }
__device__ __forceinline__ long long bnot(long long x) { return ~x; }
__device__ __forceinline__ unsigned char bnot(unsigned char x) { return !x; }
";

/// A helper a formula calls by name, defined once with [`helper!`].
#[derive(Debug, Clone, Copy)]
pub struct Helper {
    pub name: &'static str,
    /// `(local, expression)` pairs, then the result expression.
    pub lets: &'static [(&'static str, &'static str)],
    pub result: &'static str,
}

impl Helper {
    /// The helper as a CUDA function template over `T`.
    pub fn cuda(&self) -> String {
        let mut body = String::new();
        for (v, e) in self.lets {
            body.push_str(&format!("T {v} = {}; ", cuda_text(e)));
        }
        format!(
            "template <class T> __device__ __forceinline__ T {}(T a) {{ {body}return {}; }}\n",
            self.name,
            cuda_text(self.result)
        )
    }
}

/// Defines a helper `name(a)` for formulas: a generic Rust function (through
/// a trait of the same name implemented for `f32` and `f64`, so literals take
/// the type) and its [`Helper`] record `NAME` for the CUDA prelude.
macro_rules! helper {
    ($(#[$m:meta])* $name:ident, $record:ident = |$a:ident| { $(let $v:ident = $ve:expr;)* $e:expr }) => {
        $(#[$m])*
        #[allow(non_camel_case_types)]
        pub trait $name {
            fn $name(self) -> Self;
        }
        // The literals are written once for both types (MindSpore's
        // constants, with more digits than an f32 holds).
        #[allow(clippy::excessive_precision)]
        impl $name for f32 {
            #[inline(always)]
            fn $name(self) -> f32 {
                #[allow(unused_imports)]
                use $crate::formula::fns::*;
                let $a: f32 = self;
                $(let $v: f32 = $ve;)*
                $e
            }
        }
        impl $name for f64 {
            #[inline(always)]
            fn $name(self) -> f64 {
                #[allow(unused_imports)]
                use $crate::formula::fns::*;
                let $a: f64 = self;
                $(let $v: f64 = $ve;)*
                $e
            }
        }
        $(#[$m])*
        #[inline(always)]
        pub fn $name<T: $name>(x: T) -> T {
            <T as $name>::$name(x)
        }
        pub const $record: $crate::formula::Helper = $crate::formula::Helper {
            name: stringify!($name),
            lets: &[$((stringify!($v), stringify!($ve))),*],
            result: stringify!($e),
        };
    };
}

/// The helpers formulas call (each a Rust function in [`fns`] and a CUDA
/// function template in the prelude).
pub mod helpers {
    helper!(
        /// The logistic function, without overflow: with `e = exp(-|a|)`,
        /// `1/(1+e)` for `a ≥ 0`, `e/(1+e)` below.
        sigm, SIGM = |a| {
            let e = exp(-fabs(a));
            select(ge(a, 0.0), 1.0, e) / (1.0 + e)
        }
    );
    helper!(
        /// `log(1 + exp(a))` without overflow or cancellation.
        softplus_, SOFTPLUS = |a| {
            select(gt(a, 0.0), a, 0.0) + log1p(exp(-fabs(a)))
        }
    );
    helper!(
        /// GeLU's derivative in its tanh form: with
        /// `t = tanh(c·(a + k·a³))`, `0.5·(1 + t) + 0.5·a·(1 − t²)·c·(1 + 3k·a²)`
        /// (`c = 0.7978845608`, MindSpore's √(2/π), `k = 0.044715`).
        gelu_slope_, GELU_SLOPE = |a| {
            let t = tanh(0.7978845608 * (a + 0.044715 * a * a * a));
            0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * 0.7978845608 * (1.0 + 3.0 * 0.044715 * a * a)
        }
    );
    helper!(
        /// SiLU's derivative, `s·(1 + a·(1 − s))` with `s = sigm(a)`.
        silu_slope_, SILU_SLOPE = |a| {
            let s = sigm(a);
            s * (1.0 + a * (1.0 - s))
        }
    );

    /// Every helper, in dependency order (the CUDA prelude defines them so).
    pub const ALL: &[super::Helper] = &[SIGM, SOFTPLUS, GELU_SLOPE, SILU_SLOPE];
}

/// The CUDA definitions formulas need: [`fns`]'s non-math functions and
/// every helper, as function templates.
pub fn cuda_prelude() -> String {
    let mut s = String::from(CUDA_FNS);
    for h in helpers::ALL {
        s.push_str(&h.cuda());
    }
    s
}

/// `formula!(NAME = [flags] |a| expr)` or `|a, b| expr`, with attribute
/// values `|a; p0| expr`, `|a, b; p0, p1| expr`: a [`Formula`] constant (see
/// the module documentation). Flags: `wide` (f32 computed in f64), `test`
/// (a bool result), `params("alpha")` (the attributes read as `p0`, `p1`),
/// `int(expr)` (the form the GPU's integer and bool kernels compute, where
/// `expr` differs there), `named("erfinv")` (it calls a function written in
/// Rust and in CUDA, not as a formula), `ints` (it holds on integers:
/// integer calls compute in their own dtype), `bools` (it holds on bools),
/// `logic` (its inputs are truth values: it computes on bools only).
/// `[int_only]`: a formula of integers (bitwise operations), with an `i64`
/// function and no float kernels.
#[macro_export]
macro_rules! formula {
    ($(#[$m:meta])* $vis:vis $name:ident = [int_only $($flag:tt)*] |$a:ident $(, $b:ident)?| $e:expr) => {
        $(#[$m])*
        $vis const $name: $crate::formula::Formula = {
            #[allow(unused_variables, unused_imports, clippy::all)]
            fn ei64(a: i64, b: i64, p0: i64, p1: i64) -> i64 {
                use $crate::formula::fns::*;
                let $a = a;
                $(let $b = b;)?
                $e
            }
            $crate::formula::Formula {
                arity: $crate::formula!(@arity $($b)?),
                test: false,
                wide: false,
                params: &[],
                ints: true,
                bools: $crate::formula!(@has bools [$($flag)*]),
                logic: false,
                source: stringify!($e),
                int_source: None,
                named: None,
                float: None,
                int: Some(ei64),
            }
        };
    };
    ($(#[$m:meta])* $vis:vis $name:ident = [$($flag:tt)*] |$a:ident $(, $b:ident)? $(; $($p:ident),+)?| $e:expr) => {
        $(#[$m])*
        $vis const $name: $crate::formula::Formula = {
            #[allow(unused_variables, unused_imports, clippy::all)]
            #[inline(always)]
            fn e64(a: f64, b: f64, p0: f64, p1: f64) -> f64 {
                use $crate::formula::fns::*;
                let $a = a;
                $(let $b = b;)?
                $(let [$($p,)+ ..] = [p0, p1];)?
                $crate::formula!(@value [$($flag)*] $e)
            }
            #[allow(unused_variables, unused_imports, clippy::all)]
            #[inline(always)]
            fn e32(a: f32, b: f32, p0: f32, p1: f32) -> f32 {
                use $crate::formula::fns::*;
                $crate::formula!(@e32 [$($flag)*] a, b, p0, p1, {
                    let $a = a;
                    $(let $b = b;)?
                    $(let [$($p,)+ ..] = [p0, p1];)?
                    $crate::formula!(@value [$($flag)*] $e)
                })
            }
            #[allow(unused_variables)]
            fn f64s(a: &[f64], b: &[f64], p: &[f64], out: &mut [f64]) {
                let (p0, p1) = ($crate::formula::param(p, 0), $crate::formula::param(p, 1));
                $crate::formula!(@loop [$($b)?] a, b, out, |x, y| e64(x, y, p0, p1));
            }
            #[allow(unused_variables)]
            fn f32s(a: &[f32], b: &[f32], p: &[f64], out: &mut [f32]) {
                let (p0, p1) = ($crate::formula::param(p, 0) as f32, $crate::formula::param(p, 1) as f32);
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    #[allow(unused_variables)]
                    #[target_feature(enable = "avx2")]
                    unsafe fn avx2(a: &[f32], b: &[f32], p0: f32, p1: f32, out: &mut [f32]) {
                        $crate::formula!(@loop [$($b)?] a, b, out, |x, y| e32(x, y, p0, p1));
                    }
                    // SAFETY: AVX2 is present.
                    return unsafe { avx2(a, b, p0, p1, out) };
                }
                $crate::formula!(@loop [$($b)?] a, b, out, |x, y| e32(x, y, p0, p1));
            }
            $crate::formula::Formula {
                arity: $crate::formula!(@arity $($b)?),
                test: $crate::formula!(@has test [$($flag)*]),
                wide: $crate::formula!(@has wide [$($flag)*]),
                params: $crate::formula!(@params [$($flag)*]),
                ints: $crate::formula!(@has ints [$($flag)*]),
                bools: $crate::formula!(@has bools [$($flag)*]),
                logic: $crate::formula!(@has logic [$($flag)*]),
                source: stringify!($e),
                int_source: $crate::formula!(@int [$($flag)*]),
                named: $crate::formula!(@named [$($flag)*]),
                float: Some($crate::formula::Kernels {
                    e32,
                    e64,
                    f32: f32s,
                    f64: f64s,
                }),
                int: None,
            }
        };
    };
    (@arity) => { 1 };
    (@arity $b:ident) => { 2 };
    (@value [$($flag:tt)*] $e:expr) => {
        $crate::formula!(@value_of [$($flag)*] [$($flag)*] $e)
    };
    (@value_of [] [$($all:tt)*] $e:expr) => { $e };
    (@value_of [test $($rest:tt)*] [$($all:tt)*] $e:expr) => { if $e { 1.0 } else { 0.0 } };
    (@value_of [$f:tt $($rest:tt)*] [$($all:tt)*] $e:expr) => {
        $crate::formula!(@value_of [$($rest)*] [$($all)*] $e)
    };
    (@e32 [] $a:ident, $b:ident, $p0:ident, $p1:ident, $body:block) => { $body };
    (@e32 [wide $($rest:tt)*] $a:ident, $b:ident, $p0:ident, $p1:ident, $body:block) => {
        e64($a as f64, $b as f64, $p0 as f64, $p1 as f64) as f32
    };
    (@e32 [$f:tt $($rest:tt)*] $a:ident, $b:ident, $p0:ident, $p1:ident, $body:block) => {
        $crate::formula!(@e32 [$($rest)*] $a, $b, $p0, $p1, $body)
    };
    (@loop [] $a:ident, $b:ident, $out:ident, |$x:ident, $y:ident| $f:expr) => {
        for (o, &$x) in $out.iter_mut().zip($a) {
            let $y = $x;
            *o = $f;
        }
    };
    (@loop [$bb:ident] $a:ident, $b:ident, $out:ident, |$x:ident, $y:ident| $f:expr) => {
        for ((o, &$x), &$y) in $out.iter_mut().zip($a).zip($b) {
            *o = $f;
        }
    };
    (@has $w:ident []) => { false };
    (@has test [test $($rest:tt)*]) => { true };
    (@has wide [wide $($rest:tt)*]) => { true };
    (@has ints [ints $($rest:tt)*]) => { true };
    (@has bools [bools $($rest:tt)*]) => { true };
    (@has logic [logic $($rest:tt)*]) => { true };
    (@has $w:ident [$f:tt $($rest:tt)*]) => { $crate::formula!(@has $w [$($rest)*]) };
    (@params []) => { &[] };
    (@params [params($($p:literal),*) $($rest:tt)*]) => { &[$($p),*] };
    (@params [$f:tt $($rest:tt)*]) => { $crate::formula!(@params [$($rest)*]) };
    (@int []) => { None };
    (@int [int($e:expr) $($rest:tt)*]) => { Some(stringify!($e)) };
    (@int [$f:tt $($rest:tt)*]) => { $crate::formula!(@int [$($rest)*]) };
    (@named []) => { None };
    (@named [named($n:literal) $($rest:tt)*]) => { Some($n) };
    (@named [$f:tt $($rest:tt)*]) => { $crate::formula!(@named [$($rest)*]) };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::formula! {
        GELU_TEST = [] |a| 0.5 * a * (1.0 + tanh(0.7978845608 * (a + 0.044715 * a * a * a)))
    }
    crate::formula! {ELU_TEST = [wide params("alpha")] |a; p0| select(gt(a, 0.0), a, p0 * expm1(a))}
    crate::formula! {GT_TEST = [test] |a, b| gt(a, b)}

    #[test]
    fn cuda_text_casts_literals_and_params() {
        assert_eq!(
            GELU_TEST.cuda(),
            "(T)0.5 * a * ((T)1.0 + tanh((T)0.7978845608 * (a + (T)0.044715 * a * a * a)))"
        );
        assert_eq!(
            ELU_TEST.cuda(),
            "select(gt(a, (T)0.0), a, (T)p0 * expm1(a))"
        );
        assert_eq!(cuda_text("x1 + 1e-3 * 2.5E+2"), "x1 + (T)1e-3 * (T)2.5E+2");
        assert_eq!(ELU_TEST.params, ["alpha"]);
        const { assert!(ELU_TEST.wide && !GELU_TEST.wide && GT_TEST.test) };
        assert_eq!((GT_TEST.arity, GELU_TEST.arity), (2, 1));
    }

    #[test]
    fn kernels_compute_the_expression() {
        let x = [-2.0f32, -0.5, 0.0, 0.5, 2.0];
        let mut out = [0f32; 5];
        (ELU_TEST.kernels().f32)(&x, &[], &[1.5], &mut out);
        for (o, &v) in out.iter().zip(&x) {
            let want = if v > 0.0 {
                v
            } else {
                (1.5 * (v as f64).exp_m1()) as f32
            };
            assert_eq!(o.to_bits(), want.to_bits());
        }
        let y = [0.0f32, 0.0, 0.0, 1.0, 1.0];
        (GT_TEST.kernels().f32)(&x, &y, &[], &mut out);
        assert_eq!(out, [0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(
            GELU_TEST.un64(1.0, &[]),
            0.5 * (1.0 + (0.7978845608f64 * 1.044715).tanh())
        );
    }

    #[test]
    fn helpers_are_cuda_templates() {
        assert_eq!(
            helpers::SIGM.cuda(),
            "template <class T> __device__ __forceinline__ T sigm(T a) { T e = exp(-fabs(a)); return select(ge(a, (T)0.0), (T)1.0, e) / ((T)1.0 + e); }\n"
        );
        let p = cuda_prelude();
        assert!(p.contains("T silu_slope_(T a)") && p.contains("bool gt(T x, T y)"));
    }
}
