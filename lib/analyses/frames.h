/*
 * frames.h: TensorFlow's control-flow frames, as its executor assigns them.
 *
 * A TF1 while loop runs its body in a frame: an Enter op starts the frame
 * named by its `frame_name` attr (a child of the frame its input is in),
 * an Exit hands its value back to the parent frame, NextIteration carries
 * a value to the next iteration of the same frame.  Every other op is in
 * the frame of the tensors it reads.  The frames are computed the way
 * TensorFlow's BuildControlFlowInfo does it: a breadth-first walk from the
 * ops without inputs along data and control edges, each op taking the
 * frame of the first edge that reaches it; an edge from another frame that
 * reaches it later is a mismatch, which ge_frames_validate reports.
 *
 * Frames are numbered: 0 is the root frame (no loop), 1.. are loops, each
 * identified by its frame_name and its parent frame (a nested loop's
 * frame_name is reused in every iteration of its parent, which is one
 * frame here).  Ops the walk does not reach (a cycle with no way in) and
 * dead ops have frame -1.
 *
 * Cost: linear in ops and edges.  The result is cached in the graph and
 * recomputed when the graph's version moves (every edit, attrs included).
 * The pointer returned by ge_graph_frames stays valid until the next edit
 * of the graph or its freeing; the graph owns it.
 */
#ifndef GE_FRAMES_H
#define GE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "graph/graph.h"

typedef struct ge_frames ge_frames;

/* The frames of g, computed on first use after an edit.  Never NULL. */
const ge_frames *ge_graph_frames(const ge_graph *g);

/* 1 when every live op is in frame 0, proven without the walk: no live
 * Enter opens a frame, and every input of a live op comes from a live op
 * earlier in node order, so that the walk reaches each op from an op
 * without inputs (an op on a cycle is not reached: frame -1).  0 when
 * only ge_graph_frames can say.  One pass over the inputs. */
int ge_frames_all_root(const ge_graph *g);

/* Number of frames, the root included (so at least 1). */
size_t ge_frames_count(const ge_frames *F);
/* The frame of an op: 0 root, >0 a loop, -1 dead or unreachable. */
int32_t ge_frames_op(const ge_frames *F, ge_opid id);
/* A frame's frame_name ("" for the root). */
const char *ge_frames_name(const ge_frames *F, int32_t f);
/* A frame's parent (-1 for the root). */
int32_t ge_frames_parent(const ge_frames *F, int32_t f);
/* The outermost loop frame that f is in (f itself for a top-level loop,
 * 0 for the root). */
int32_t ge_frames_top(const ge_frames *F, int32_t f);
/* The frame an op's consumers are in: its own, but the parent's for an
 * Exit. */
int32_t ge_frames_out(const ge_graph *g, const ge_frames *F, ge_opid id);

/* Appends one line per control-flow problem that TensorFlow's executor
 * refuses or cannot run, naming the op and its frame: an op reading
 * tensors of different frames (a tensor crossing frames without Enter or
 * Exit), an Enter without frame_name, an Exit or NextIteration outside any
 * loop, a NextIteration that does not feed its loop's Merge, a loop Merge
 * that does not read one Enter and one NextIteration, a loop without a
 * LoopCond (or two loops sharing one frame_name), a loop Switch not
 * driven by the LoopCond, and a control edge from a Switch inside a loop.
 * Returns the number of problems. */
size_t ge_frames_validate(const ge_graph *g, ge_buf *report);

/* Adds to ops every op of every while loop (outermost loop, with all that
 * is nested in it) that an op of ops is in, in node order after the given
 * ops.  Linear in the graph. */
void ge_frames_whole_loops(const ge_graph *g, ge_opvec *ops);

/* GE_EINVAL, naming the loop and an op of it that is missing, when the
 * ops hold part of a while loop but not all of it (a copy of them would
 * read or feed the loop from outside its frame).  ops may repeat. */
int ge_frames_check_view(const ge_graph *g, const ge_opid *ops, size_t n,
			 ge_error *err);

/* Frees a graph's cached frames (graph.c calls it when the graph goes). */
void ge_frames_release(ge_frames *F);

#endif
