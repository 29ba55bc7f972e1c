//! The plan's own kernels: they read and write `f32` data in place (arena
//! blocks, argument buffers), allocate nothing, and split large work over
//! as many parts as rayon has threads: on the plans' own spinning workers
//! ([`super::team`]) while a plan owns them, else on rayon's pool, which the
//! GEMM's own threading (large products only) also uses, so a plan runs one
//! kernel at a time and never oversubscribes the cores.

use std::fmt::Debug;

/// A kernel's input: a pointer to its data, by storage kind.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Src {
    F32(*const f32),
    /// Never read by a kernel (shown in errors).
    #[allow(dead_code)]
    F64(*const f64),
    I64(*const i64),
    Bool(*const bool),
}

// Kernels only read through these, each thread its own part.
unsafe impl Send for Src {}
unsafe impl Sync for Src {}

impl Src {
    pub fn f32(self) -> *const f32 {
        match self {
            Src::F32(p) => p,
            other => panic!("a compiled kernel expected f32 data, got {other:?}"),
        }
    }

    pub fn i64(self) -> *const i64 {
        match self {
            Src::I64(p) => p,
            other => panic!("a compiled kernel expected integer data, got {other:?}"),
        }
    }
}

/// A pointer that may cross to rayon's threads (each thread touches its own
/// part).
#[derive(Clone, Copy)]
pub(crate) struct P<T>(pub *mut T);
unsafe impl<T> Send for P<T> {}
unsafe impl<T> Sync for P<T> {}

#[derive(Clone, Copy)]
pub(crate) struct C<T>(pub *const T);
unsafe impl<T> Send for C<T> {}
unsafe impl<T> Sync for C<T> {}

// Methods, so closures capture the wrapper (Send) and not its field.
impl<T> P<T> {
    pub fn get(self) -> *mut T {
        self.0
    }
}

impl<T> C<T> {
    pub fn get(self) -> *const T {
        self.0
    }
}

/// Work (in rough element-operations) below which a kernel stays on one thread.
pub(crate) const PAR_WORK: usize = 1 << 16;

/// Runs `f(start, end)` over `[0, n)`, split into one contiguous range per
/// thread when `work` (element-operations in all) is large enough. The split
/// depends only on `n` and the pool's size, so results are deterministic.
pub(crate) fn par_ranges(n: usize, work: usize, f: impl Fn(usize, usize) + Sync) {
    let threads = rayon::current_num_threads().min(n);
    if threads <= 1 || work < PAR_WORK || on_one_thread() {
        f(0, n);
        return;
    }
    let chunk = n.div_ceil(threads);
    if let Some(team) = super::team::Team::get().filter(|t| t.size() == threads) {
        let part = |t: usize| {
            let (a, b) = (t * chunk, ((t + 1) * chunk).min(n));
            if a < b {
                f(a, b);
            }
        };
        if team.run(threads, &part).is_some() {
            return;
        }
    }
    rayon::scope(|s| {
        for t in 1..threads {
            let f = &f;
            let (a, b) = (t * chunk, ((t + 1) * chunk).min(n));
            if a < b {
                s.spawn(move |_| f(a, b));
            }
        }
        f(0, chunk.min(n));
    });
}

/// Like [`par_ranges`], in at most `max_parts` ranges, giving each its index
/// (for per-thread scratch space and partial results); returns how many
/// ranges there were.
pub(crate) fn par_parts(
    n: usize,
    max_parts: usize,
    work: usize,
    f: impl Fn(usize, usize, usize) + Sync,
) -> usize {
    let threads = rayon::current_num_threads().min(max_parts).min(n).max(1);
    if threads <= 1 || work < PAR_WORK || on_one_thread() {
        f(0, 0, n);
        return 1;
    }
    let chunk = n.div_ceil(threads);
    let parts = n.div_ceil(chunk);
    if let Some(team) = super::team::Team::get().filter(|t| t.size() >= parts) {
        let part = |t: usize| {
            let (a, b) = (t * chunk, ((t + 1) * chunk).min(n));
            f(t, a, b);
        };
        if team.run(parts, &part).is_some() {
            return parts;
        }
    }
    rayon::scope(|s| {
        for t in 1..parts {
            let f = &f;
            let (a, b) = (t * chunk, ((t + 1) * chunk).min(n));
            s.spawn(move |_| f(t, a, b));
        }
        f(0, 0, chunk.min(n));
    });
    parts
}

/// The threads rayon runs kernels on (one inside a [`Concurrent`] half).
pub(crate) fn threads() -> usize {
    if on_one_thread() {
        1
    } else {
        rayon::current_num_threads().max(1)
    }
}

thread_local! {
    static ONE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn on_one_thread() -> bool {
    ONE_THREAD.with(|c| c.get())
}

/// Runs `f` with the kernels it runs kept to this thread.
pub(crate) fn one_thread<R>(f: impl FnOnce() -> R) -> R {
    let before = ONE_THREAD.with(|c| c.replace(true));
    let r = f();
    ONE_THREAD.with(|c| c.set(before));
    r
}

/// Two independent kernels (neither reads what the other writes) run at
/// once, each on one thread: two GEMMs of a backward pass (a layer's weight
/// and input gradients) this way lose nothing to splitting each one.
#[derive(Debug)]
pub(crate) struct Concurrent {
    pub a: Box<dyn FastKernel>,
    pub b: Box<dyn FastKernel>,
    /// How many of the inputs and outputs are `a`'s.
    pub a_ins: usize,
    pub a_outs: usize,
}

impl FastKernel for Concurrent {
    fn name(&self) -> String {
        format!("{} || {}", self.a.name(), self.b.name())
    }

    fn scratch(&self) -> usize {
        self.a.scratch() + self.b.scratch()
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], scratch: *mut f32) -> Result<(), String> {
        let (ia, ib) = ins.split_at(self.a_ins);
        let outs: Vec<P<f32>> = outs.iter().map(|&p| P(p)).collect();
        let (oa, ob) = outs.split_at(self.a_outs);
        let (sa, sb) = (P(scratch), P(scratch.add(self.a.scratch())));
        let run = |k: &dyn FastKernel, ins: &[Src], outs: &[P<f32>], scratch: P<f32>| {
            let outs: Vec<*mut f32> = outs.iter().map(|p| p.get()).collect();
            one_thread(|| k.run(ins, &outs, scratch.get()))
        };
        if let Some(team) = super::team::Team::get().filter(|t| t.size() == 2) {
            let results = std::sync::Mutex::new([Ok(()), Ok(())]);
            let part = |t: usize| {
                let r = if t == 0 {
                    run(&*self.a, ia, oa, sa)
                } else {
                    run(&*self.b, ib, ob, sb)
                };
                results.lock().unwrap()[t] = r;
            };
            if team.run(2, &part).is_some() {
                let [ra, rb] = results.into_inner().unwrap();
                return ra.and(rb);
            }
        }
        let (ra, rb) = rayon::join(|| run(&*self.a, ia, oa, sa), || run(&*self.b, ib, ob, sb));
        ra.and(rb)
    }
}

pub(crate) trait FastKernel: Send + Sync + Debug {
    fn name(&self) -> String;

    /// `(input, output)` pairs that may share a block (elementwise kernels).
    fn in_place(&self) -> Vec<(usize, usize)> {
        Vec::new()
    }

    /// Scratch `f32` elements it needs while it runs.
    fn scratch(&self) -> usize {
        0
    }

    /// This kernel as a GEMM (for epilogues).
    fn as_gemm(&mut self) -> Option<&mut Gemm> {
        None
    }

    /// Runs on `ins` (each covering its register) writing every element of
    /// `outs`. An output may alias the input it is declared in place of.
    ///
    /// # Safety
    /// The pointers must cover the registers the kernel was built for, and
    /// outputs must not overlap inputs except as declared in place.
    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], scratch: *mut f32) -> Result<(), String>;
}

// ---------------------------------------------------------------------------
// GEMM

/// `c = beta · a·b` (or `c = c0 + beta · a·b`), batched: `a` and `b` are
/// given with row and column strides, so transposes cost nothing; batches
/// broadcast by offsets.
#[derive(Debug)]
pub(crate) struct Gemm {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a_rs: isize,
    pub a_cs: isize,
    pub b_rs: isize,
    pub b_cs: isize,
    /// Offsets of each batch's `a` and `b` matrices (one entry: no batch).
    pub batches: Vec<(usize, usize)>,
    /// Scale of the product (a scalar multiplication folded in).
    pub beta: f32,
    /// A third input `c0` the product is added to (an `Add` folded in).
    pub accumulate: bool,
    /// A last input, a row of `n` added to every row of the product (a
    /// `BiasAdd` folded in), each thread on its own block while it is in
    /// cache; then `relu`, `max(x, 0)`, likewise.
    pub bias: bool,
    pub relu: bool,
}

impl FastKernel for Gemm {
    fn name(&self) -> String {
        format!(
            "gemm {}x{}x{}{}{}{}",
            self.m,
            self.n,
            self.k,
            if self.batches.len() > 1 {
                format!(" batch {}", self.batches.len())
            } else {
                String::new()
            },
            if self.beta != 1.0 {
                format!(" *{}", self.beta)
            } else {
                String::new()
            },
            if self.accumulate { " +c" } else { "" }
        ) + if self.bias { " +bias" } else { "" }
            + if self.relu { " relu" } else { "" }
    }

    fn as_gemm(&mut self) -> Option<&mut Gemm> {
        Some(self)
    }

    fn in_place(&self) -> Vec<(usize, usize)> {
        if self.accumulate {
            vec![(2, 0)]
        } else {
            Vec::new()
        }
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], _scratch: *mut f32) -> Result<(), String> {
        let (a, b, c) = (C(ins[0].f32()), C(ins[1].f32()), P(outs[0]));
        let (m, n, k) = (self.m, self.n, self.k);
        let osz = m * n;
        if self.accumulate {
            let c0 = ins[2].f32();
            if !std::ptr::eq(c0, c.get()) {
                std::ptr::copy_nonoverlapping(c0, c.get(), osz * self.batches.len());
            }
        }
        if k == 0 {
            if !self.accumulate {
                std::ptr::write_bytes(c.get(), 0, osz * self.batches.len());
            }
            return Ok(());
        }
        // Product `bi`, rows `r0..r1` and columns `c0..c1` of it.
        let part = |bi: usize, (r0, r1): (usize, usize), (c0, c1): (usize, usize), par| {
            let (ao, bo) = self.batches[bi];
            gemm::gemm(
                r1 - r0,
                c1 - c0,
                k,
                c.get().add(bi * osz + r0 * n + c0),
                1,
                n as isize,
                self.accumulate,
                a.get().add(ao).offset(r0 as isize * self.a_rs),
                self.a_cs,
                self.a_rs,
                b.get().add(bo).offset(c0 as isize * self.b_cs),
                self.b_cs,
                self.b_rs,
                1.0,
                self.beta,
                false,
                false,
                false,
                par,
            );
            if self.bias || self.relu {
                let bias = self.bias.then(|| ins[ins.len() - 1].f32());
                for r in r0..r1 {
                    let row =
                        std::slice::from_raw_parts_mut(c.get().add(bi * osz + r * n + c0), c1 - c0);
                    if let Some(b) = bias {
                        let b = std::slice::from_raw_parts(b.add(c0), c1 - c0);
                        for (o, &x) in row.iter_mut().zip(b) {
                            *o += x;
                        }
                    }
                    if self.relu {
                        for o in row.iter_mut() {
                            *o = if *o > 0.0 { *o } else { 0.0 };
                        }
                    }
                }
            }
        };
        let work = m * n * k;
        let nb = self.batches.len();
        let t = threads();
        if nb >= 2 * t && work < 1 << 21 {
            // Many small products: whole products per thread.
            par_ranges(nb, work * nb, |s, e| {
                for bi in s..e {
                    part(bi, (0, m), (0, n), gemm::Parallelism::None);
                }
            });
        } else if work >= 1 << 27 && t > 1 {
            // Large products: the GEMM crate's own threading.
            for bi in 0..nb {
                part(bi, (0, m), (0, n), gemm::Parallelism::Rayon(0));
            }
        } else {
            // Mid-sized products: one block of rows (or columns) per thread,
            // each a single-threaded GEMM. One join per product, and the
            // thread that splits runs the other block itself when no thread
            // is free to (the GEMM crate's threading waits for all of its
            // threads, several times per product: on a busy machine that
            // costs more than it gains).
            let by_rows = m >= n;
            let len = if by_rows { m } else { n };
            // Blocks of whole 16-row (column) panels.
            let panels = len.div_ceil(16);
            for bi in 0..nb {
                par_ranges(panels, work / 16, |p0, p1| {
                    let span = ((p0 * 16).min(len), (p1 * 16).min(len));
                    if by_rows {
                        part(bi, span, (0, n), gemm::Parallelism::None);
                    } else {
                        part(bi, (0, m), span, gemm::Parallelism::None);
                    }
                });
            }
        }
        Ok(())
    }
}
