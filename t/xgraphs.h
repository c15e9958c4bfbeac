/*
 * t/xgraphs.h: graphs of TF1 and functional control flow, as text
 * GraphDefs, for the executor's tests (t/exec.c, t/exec-mutate.c).
 */
#ifndef GE_T_XGRAPHS_H
#define GE_T_XGRAPHS_H

#define NODE(n, op, ins, attrs) \
	"node { name: \"" n "\" op: \"" op "\" " ins " " attrs "}\n"
#define IN(x) "input: \"" x "\" "
#define FL "attr { key: \"T\" value { type: DT_FLOAT } } "
#define FCONST(n, v, ins) \
	"node { name: \"" n "\" op: \"Const\" " ins \
	" attr { key: \"dtype\" value { type: DT_FLOAT } } " \
	"attr { key: \"value\" value { tensor { dtype: DT_FLOAT " \
	"tensor_shape { } float_val: " v " } } } }\n"
#define PH(n, dt, shape) \
	NODE(n, "Placeholder", "", "attr { key: \"dtype\" value { type: " dt \
	     " } } attr { key: \"shape\" value { shape { " shape " } } }")
#define ENTER(n, x, frame, cst) \
	NODE(n, "Enter", IN(x), FL \
	     "attr { key: \"frame_name\" value { s: \"" frame "\" } } " \
	     "attr { key: \"is_constant\" value { b: " cst " } }")
#define MERGE(n, a, b) \
	NODE(n, "Merge", IN(a) IN(b), FL "attr { key: \"N\" value { i: 2 } }")
#define BIN(n, op, a, b) NODE(n, op, IN(a) IN(b), FL)
#define UN(n, op, a) NODE(n, op, IN(a), FL)

/* i = start; while (i < limit) i = i + 1, in frame `frame`; the limit
 * and the step come in through constant Enters; p prefixes the names. */
#define LOOP(p, start, limit, one, frame) \
	ENTER(p "enter", start, frame, "false") \
	ENTER(p "limit", limit, frame, "true") \
	ENTER(p "one", one, frame, "true") \
	MERGE(p "merge", p "enter", p "next") \
	BIN(p "less", "Less", p "merge", p "limit") \
	NODE(p "cond", "LoopCond", IN(p "less"), "") \
	BIN(p "switch", "Switch", p "merge", p "cond") \
	UN(p "body", "Identity", p "switch:1") \
	BIN(p "add", "AddV2", p "body", p "one") \
	UN(p "next", "NextIteration", p "add") \
	UN(p "exit", "Exit", p "switch")

#define COND \
	PH("p", "DT_BOOL", "") FCONST("x", "3", "") \
	FCONST("two", "2", "") FCONST("hundred", "100", "") \
	BIN("sw", "Switch", "x", "p") \
	BIN("t", "Mul", "sw:1", "two") \
	BIN("f", "AddV2", "sw:0", "hundred") \
	MERGE("m", "f", "t") \
	UN("out", "Identity", "m") \
	FCONST("after_t", "7", IN("^t")) \
	/* a loop on the false branch: entered dead when p is true */ \
	FCONST("ten", "10", "") FCONST("one", "1", "") \
	LOOP("w/", "sw:0", "ten", "one", "w/ctx") \
	MERGE("m2", "w/exit", "t")

#define WHILE1 \
	FCONST("zero", "0", "") FCONST("ten", "10", "") FCONST("one", "1", "") \
	LOOP("l/", "zero", "ten", "one", "while/ctx") \
	UN("out", "Identity", "l/exit")

/* Outer: i from 0 while i < 3; s goes into an inner loop that adds 1
 * four times: s ends at 12. */
#define NESTED \
	FCONST("zero", "0", "") FCONST("three", "3", "") \
	FCONST("four", "4", "") FCONST("one", "1", "") \
	ENTER("o/ei", "zero", "O", "false") ENTER("o/es", "zero", "O", "false") \
	ENTER("o/lim", "three", "O", "true") ENTER("o/one", "one", "O", "true") \
	ENTER("o/zero", "zero", "O", "true") ENTER("o/four", "four", "O", "true") \
	MERGE("o/mi", "o/ei", "o/ni") MERGE("o/ms", "o/es", "o/ns") \
	BIN("o/less", "Less", "o/mi", "o/lim") \
	NODE("o/cond", "LoopCond", IN("o/less"), "") \
	BIN("o/swi", "Switch", "o/mi", "o/cond") \
	BIN("o/sws", "Switch", "o/ms", "o/cond") \
	UN("o/idi", "Identity", "o/swi:1") UN("o/ids", "Identity", "o/sws:1") \
	ENTER("i/ej", "o/zero", "I", "false") ENTER("i/es", "o/ids", "I", "false") \
	ENTER("i/lim", "o/four", "I", "true") ENTER("i/one", "o/one", "I", "true") \
	MERGE("i/mj", "i/ej", "i/nj") MERGE("i/ms", "i/es", "i/ns") \
	BIN("i/less", "Less", "i/mj", "i/lim") \
	NODE("i/cond", "LoopCond", IN("i/less"), "") \
	BIN("i/swj", "Switch", "i/mj", "i/cond") \
	BIN("i/sws", "Switch", "i/ms", "i/cond") \
	UN("i/idj", "Identity", "i/swj:1") UN("i/ids", "Identity", "i/sws:1") \
	BIN("i/addj", "AddV2", "i/idj", "i/one") \
	BIN("i/adds", "AddV2", "i/ids", "i/one") \
	UN("i/nj", "NextIteration", "i/addj") \
	UN("i/ns", "NextIteration", "i/adds") \
	UN("i/xs", "Exit", "i/sws") \
	BIN("o/addi", "AddV2", "o/idi", "o/one") \
	UN("o/ni", "NextIteration", "o/addi") \
	UN("o/ns", "NextIteration", "i/xs") \
	UN("o/xi", "Exit", "o/swi") UN("o/xs", "Exit", "o/sws") \
	UN("out", "Identity", "o/xs")

/* s = 0; for (i = 0; i < 5; i++) s += i < 2 ? 10 : 1;  a cond in the
 * body, with dead ops in every iteration: s ends at 23. */
#define CONDLOOP \
	FCONST("zero", "0", "") FCONST("five", "5", "") FCONST("one", "1", "") \
	FCONST("two", "2", "") FCONST("ten", "10", "") \
	ENTER("ei", "zero", "C", "false") ENTER("es", "zero", "C", "false") \
	ENTER("e5", "five", "C", "true") ENTER("e1", "one", "C", "true") \
	ENTER("e2", "two", "C", "true") ENTER("e10", "ten", "C", "true") \
	MERGE("mi", "ei", "ni") MERGE("ms", "es", "ns") \
	BIN("less", "Less", "mi", "e5") \
	NODE("lc", "LoopCond", IN("less"), "") \
	BIN("swi", "Switch", "mi", "lc") BIN("sws", "Switch", "ms", "lc") \
	UN("idi", "Identity", "swi:1") UN("ids", "Identity", "sws:1") \
	BIN("small", "Less", "idi", "e2") \
	BIN("csw", "Switch", "ids", "small") \
	BIN("tb", "AddV2", "csw:1", "e10") BIN("fb", "AddV2", "csw:0", "e1") \
	MERGE("cm", "fb", "tb") \
	BIN("addi", "AddV2", "idi", "e1") \
	UN("ni", "NextIteration", "addi") UN("ns", "NextIteration", "cm") \
	UN("xs", "Exit", "sws") \
	UN("out", "Identity", "xs")

#define FN_HEAD(name, in, out) \
	"function { signature { name: \"" name "\" input_arg { name: \"x\" " \
	"type: DT_FLOAT } output_arg { name: \"" out "\" type: " in " } } "

#define FN_CONST(n, v) \
	"node_def { name: \"" n "\" op: \"Const\" attr { key: \"dtype\" " \
	"value { type: DT_FLOAT } } attr { key: \"value\" value { tensor { " \
	"dtype: DT_FLOAT tensor_shape { } float_val: " v " } } } } "

#define FN_BIN(n, op, a, b) \
	"node_def { name: \"" n "\" op: \"" op "\" input: \"" a "\" " \
	"input: \"" b "\" " FL "} "

#define FN_RET(out, v) "ret { key: \"" out "\" value: \"" v "\" } } "

#define FLIST(k) "attr { key: \"" k "\" value { list { type: DT_FLOAT } } } "

#define FUNC(k, f) "attr { key: \"" k "\" value { func { name: \"" f "\" } } } "

#define LIBRARY \
	"library { " \
	FN_HEAD("times2", "DT_FLOAT", "y") FN_CONST("two", "2") \
	FN_BIN("m", "Mul", "x", "two:output:0") FN_RET("y", "m:z:0") \
	FN_HEAD("add1", "DT_FLOAT", "y") FN_CONST("one", "1") \
	FN_BIN("a", "AddV2", "x", "one:output:0") FN_RET("y", "a:z:0") \
	FN_HEAD("less10", "DT_BOOL", "b") FN_CONST("ten", "10") \
	FN_BIN("l", "Less", "x", "ten:output:0") FN_RET("b", "l:z:0") \
	FN_HEAD("bad", "DT_FLOAT", "y") \
	"node_def { name: \"zap\" op: \"Frobnicate\" input: \"x\" } " \
	FN_RET("y", "zap:y:0") \
	"}\n"

#define FUNCS \
	PH("x", "DT_FLOAT", "") PH("p", "DT_BOOL", "") \
	PH("k", "DT_INT32", "") \
	NODE("call", "PartitionedCall", IN("x"), FLIST("Tin") FLIST("Tout") \
	     FUNC("f", "times2")) \
	NODE("direct", "add1", IN("x"), "") \
	NODE("w", "StatelessWhile", IN("x"), FLIST("T") FUNC("cond", "less10") \
	     FUNC("body", "add1")) \
	NODE("if", "If", IN("p") IN("x"), FLIST("Tin") FLIST("Tout") \
	     "attr { key: \"Tcond\" value { type: DT_BOOL } } " \
	     FUNC("then_branch", "times2") FUNC("else_branch", "add1")) \
	NODE("case", "Case", IN("k") IN("x"), FLIST("Tin") FLIST("Tout") \
	     "attr { key: \"branches\" value { list { func { name: " \
	     "\"times2\" } func { name: \"add1\" } } } }") \
	NODE("oops", "PartitionedCall", IN("x"), FLIST("Tin") FLIST("Tout") \
	     FUNC("f", "bad")) \
	LIBRARY

#endif
