//! Static memory planning: every `f32` intermediate a plan's own kernels
//! make gets an offset in one arena, allocated once and reused by every run.
//!
//! As TVM's graph memory planner: walk the steps in order, give each output a
//! free block (best fit, else grow the arena), and return the blocks of the
//! registers whose last use the step is. An elementwise kernel may declare an
//! output in place of an input; when that input dies at the step, the output
//! takes its block (XLA's buffer sharing for elementwise fusions).

/// Offsets are multiples of 16 `f32` (64 bytes).
const ALIGN: usize = 16;

fn round(n: usize) -> usize {
    n.max(1).div_ceil(ALIGN) * ALIGN
}

/// What one step does with the arena.
pub(crate) struct StepUse {
    /// Arena registers (roots) it reads.
    pub reads: Vec<u32>,
    /// Arena registers it writes, with their element counts.
    pub writes: Vec<(u32, usize)>,
    /// `(input position in reads, output position in writes)` pairs that may
    /// share a block.
    pub in_place: Vec<(usize, usize)>,
    /// Scratch elements it needs while it runs.
    pub scratch: usize,
}

pub(crate) struct Planned {
    /// Offset of each register that has one.
    pub offset: Vec<Option<usize>>,
    /// Offset of each step's scratch space.
    pub scratch: Vec<usize>,
    pub len: usize,
}

#[derive(Default)]
struct Blocks {
    /// Free blocks `(offset, len)`, sorted by offset, never adjacent.
    free: Vec<(usize, usize)>,
    top: usize,
}

impl Blocks {
    fn alloc(&mut self, n: usize) -> usize {
        let n = round(n);
        let best = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, &(_, len))| len >= n)
            .min_by_key(|(_, &(_, len))| len)
            .map(|(i, _)| i);
        if let Some(i) = best {
            let (off, len) = self.free[i];
            if len == n {
                self.free.remove(i);
            } else {
                self.free[i] = (off + n, len - n);
            }
            return off;
        }
        // Grow: a free block ending at the top is extended.
        if let Some(&(off, len)) = self.free.last() {
            if off + len == self.top {
                self.free.pop();
                self.top = off + n;
                return off;
            }
        }
        let off = self.top;
        self.top += n;
        off
    }

    fn release(&mut self, off: usize, n: usize) {
        let n = round(n);
        let i = self.free.partition_point(|&(o, _)| o < off);
        self.free.insert(i, (off, n));
        // Merge with the next, then the previous block.
        if i + 1 < self.free.len() && self.free[i].0 + self.free[i].1 == self.free[i + 1].0 {
            self.free[i].1 += self.free[i + 1].1;
            self.free.remove(i + 1);
        }
        if i > 0 && self.free[i - 1].0 + self.free[i - 1].1 == self.free[i].0 {
            self.free[i - 1].1 += self.free[i].1;
            self.free.remove(i);
        }
    }
}

/// Plans `n_regs` registers' blocks over `steps`; `keep` registers are never
/// released (none should be, but plans' outputs are not arena registers).
pub(crate) fn plan(n_regs: usize, steps: &[StepUse]) -> Planned {
    let mut last_use: Vec<Option<usize>> = vec![None; n_regs];
    let mut size: Vec<usize> = vec![0; n_regs];
    for (i, s) in steps.iter().enumerate() {
        for &r in &s.reads {
            last_use[r as usize] = Some(i);
        }
        for &(r, n) in &s.writes {
            size[r as usize] = n;
            // A register nothing reads dies where it is made.
            if last_use[r as usize].is_none() {
                last_use[r as usize] = Some(i);
            }
        }
    }
    let mut blocks = Blocks::default();
    let mut offset: Vec<Option<usize>> = vec![None; n_regs];
    let mut scratch = vec![0; steps.len()];
    let mut taken: Vec<bool> = vec![false; n_regs];
    for (i, s) in steps.iter().enumerate() {
        let mut placed = vec![false; s.writes.len()];
        for &(a, b) in &s.in_place {
            let r = s.reads[a];
            let (o, n) = s.writes[b];
            if last_use[r as usize] == Some(i)
                && !taken[r as usize]
                && !placed[b]
                && round(size[r as usize]) >= round(n)
                // An input read twice by this step must not be overwritten.
                && s.reads.iter().filter(|&&x| x == r).count() == 1
            {
                if let Some(off) = offset[r as usize] {
                    offset[o as usize] = Some(off);
                    // The output now owns the block (with the input's size).
                    size[o as usize] = size[r as usize];
                    taken[r as usize] = true;
                    placed[b] = true;
                }
            }
        }
        for (k, &(r, n)) in s.writes.iter().enumerate() {
            if !placed[k] {
                offset[r as usize] = Some(blocks.alloc(n));
            }
        }
        if s.scratch > 0 {
            scratch[i] = blocks.alloc(s.scratch);
            blocks.release(scratch[i], s.scratch);
        }
        let mut dying: Vec<u32> = s
            .reads
            .iter()
            .copied()
            .chain(s.writes.iter().map(|&(r, _)| r))
            .filter(|&r| last_use[r as usize] == Some(i) && !taken[r as usize])
            .collect();
        dying.sort_unstable();
        dying.dedup();
        for r in dying {
            if let Some(off) = offset[r as usize] {
                blocks.release(off, size[r as usize]);
                taken[r as usize] = true;
            }
        }
    }
    Planned {
        offset,
        scratch,
        len: blocks.top,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_reused_after_their_last_use() {
        // r0 = k(); r1 = k(r0); r2 = k(r1) (in place of r1); r3 = k(r2, r0)?
        let steps = vec![
            StepUse {
                reads: vec![],
                writes: vec![(0, 100)],
                in_place: vec![],
                scratch: 0,
            },
            StepUse {
                reads: vec![0],
                writes: vec![(1, 100)],
                in_place: vec![],
                scratch: 0,
            },
            StepUse {
                reads: vec![1],
                writes: vec![(2, 100)],
                in_place: vec![(0, 0)],
                scratch: 0,
            },
            StepUse {
                reads: vec![2],
                writes: vec![(3, 50)],
                in_place: vec![],
                scratch: 0,
            },
        ];
        let p = plan(4, &steps);
        // r1 may not share r0's block (r0 is read while r1 is written).
        assert_ne!(p.offset[0], p.offset[1]);
        // r2 takes r1's block in place.
        assert_eq!(p.offset[1], p.offset[2]);
        // r3 reuses r0's block, free since step 1.
        assert_eq!(p.offset[3], p.offset[0]);
        assert_eq!(p.len, 2 * round(100));
    }
}
