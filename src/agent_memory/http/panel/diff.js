// A line diff of two texts, as a block's version history shows it: the lines of
// the longest common subsequence kept, the others removed or added, in order.

/** The lines of `before` and `after` as ["same" | "removed" | "added", line] pairs. */
export function lineDiff(before, after) {
  const a = before ? before.split("\n") : [];
  const b = after ? after.split("\n") : [];
  // lengths[i][j]: the longest common subsequence of a[i:] and b[j:].
  const lengths = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      lengths[i][j] =
        a[i] === b[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(["same", a[i]]);
      i += 1;
      j += 1;
    } else if (lengths[i + 1][j] >= lengths[i][j + 1]) {
      out.push(["removed", a[i]]);
      i += 1;
    } else {
      out.push(["added", b[j]]);
      j += 1;
    }
  }
  while (i < a.length) out.push(["removed", a[i++]]);
  while (j < b.length) out.push(["added", b[j++]]);
  return out;
}
