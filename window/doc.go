// Package window fits a session's context into a model's token budget without
// losing the thread.
//
// Use: Fit(cursor, Options{Budget: b.Prompt()}) returns the messages to send,
// fitted, with the cursor's resolutions applied; Measure(cursor, …) gives its
// statistics in one call; a cursor's Pin, Outline and Summarize set the
// resolutions Fit applies (ExampleFit, ExampleMeasure).
//
// A cursor may render each entry at a lower fidelity than the log holds
// (session.Level: full, outlined, summarized, pinned, compacted, attached).
// Fit takes the cursor's context with those resolutions applied, in one call
// (Build does the same for a context and resolutions given apart), and, given
// a budget, plans further downgrades:
//
//  1. Tool results larger than a share of the budget are cut at a line boundary,
//     with a note naming the original size and where the rest is (a blob, see
//     package window/blob, or the session entry itself).
//  2. Unprotected messages are outlined, oldest turn first and largest first
//     within a turn, until the context fits; then they are summarized in the
//     same order (a message whose outline saved nothing too). Each keeps the
//     smaller of its renderings.
//  3. If that is not enough, whole turns are left out, oldest first, and one
//     short note takes their place saying how many and that the session still
//     holds them.
//
// A turn is one assistant message together with the results of its tool
// calls, or one message of any other kind (a user request, a summary, a bash
// run). Never touched by the planner: pinned entries, the first user request,
// the last user request, and the last turn. Outlined and summarized messages
// keep their role, their tool-call ids and their tool calls, so the result
// never holds a tool result without its call or a call without its result;
// a call the log never answered (a crash mid-tool) is closed with an error
// result so providers accept the context. The log itself is never changed.
//
// The same input always gives the same plan. The result fits whenever the
// protected part fits (the protected messages, and the rest of the turns of
// pinned ones at their smallest); when it does not, Build fails with a
// *BudgetError that gives the numbers, which add up.
//
// Large tool outputs can be kept out of the log in two ways, both through a
// content-addressed blob store (package window/blob, $ARBOR_DIR/blobs for the
// command): an agent calls BoundToolResult before appending a result, so the
// log holds the first lines, a note and details.arborBlob {ref, bytes}; or
// Build cuts an oversized result in the rendered context only, and writes the
// full text to Options.Blobs, for results that stay in the context, so the
// note's `arbor blob <ref>` works. Either way nothing is lost: the blob or the
// log holds every byte.
//
// Token counts are estimates (Estimator): prose, code and tool output, and
// images are counted at different rates, and Stats anchors the total on the
// usage the provider reported for the last assistant message, as pi does.
// Package window/exact supplies an exact BPE tokenizer for those who want it.
package window
