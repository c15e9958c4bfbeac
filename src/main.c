/*
 * main.c: the gerewrite command: runs Lua scripts with the gerewrite module
 * loaded, one-liners (-e), an interactive prompt (-i, repl.c), and the
 * subcommands (convert, validate, run, info, diff, dot, batch, eval,
 * verify: cmd_*.c).
 *
 * Shape (after lua.c): main creates the Lua state and calls pmain under
 * lua_pcall, so even a memory error while setting up is reported.  pmain
 * first looks for a subcommand, then collects options in one pass and runs
 * -e/-l in order in a second, then the script, then the prompt.
 *
 * Exit codes: 0 success, 1 a script raised an error, 2 usage or I/O
 * error, 3 a script did not compile.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "base/bounds.h"
#include "cli.h"
#include "lge.h"
#include "exec/xfold.h"
#include "formats/model.h"

/* ------------------------------------------------------------ help */

static void print_usage(lua_State *L, FILE *f);

static int cmd_help(lua_State *L, int argc, char **argv)
{
	if (argc > 2)
		return cli_usage("help", "one topic at a time");
	if (argc == 2)
		return cmd_help_topic(L, argv[1]);
	print_usage(L, stdout);
	return 0;
}

static int cmd_version(lua_State *L, int argc, char **argv)
{
	(void)L, (void)argc, (void)argv;
	printf("%s %s (%s)\n", PROG, PACKAGE_VERSION, LUA_RELEASE);
	return 0;
}

/*
 * Subcommands: when the first argument is one of these names, the rest of
 * the command line is theirs.  Each runs with the Lua state ready (global
 * `ge` bound) and returns the exit code.  A script with one of these names
 * is run as ./NAME.
 */
struct subcommand {
	const char *name;
	int (*run)(lua_State *L, int argc, char **argv); /* argv[0] = name */
	const char *summary;
	const char *usage;
};

static const struct subcommand subcommands[] = {
	{"run", cmd_run, "run a recipe on a model",
	 "Usage: " PROG " run RECIPE MODEL (-o OUT | --overwrite)\n"
	 "           [--param KEY=VALUE]... [--strict] [--format F] [--tags T]\n"
	 "           [--allow-missing-variables] [--functions reachable|all|none]\n"
	 "           [--quantize uint8|uint16|float16|none]\n"
	 "           [--quantize-weights PATTERN,...]\n"
	 "           [--verify] [--max-error X] [--input NAME=VALUE]... [--dim N]\n"
	 "           [--provenance field|attr|list|off]...\n"
	 "\n"
	 "Runs RECIPE (a name on the recipe path, or a .lua file) on MODEL and\n"
	 "saves the result to OUT, atomically.  Parameters are checked before\n"
	 "the model is read.  The recipe runs on the graph, then on the body\n"
	 "of every function the graph reaches through calls (a recipe with\n"
	 "`functions = false` runs on the graph alone).  Each run that changes\n"
	 "something is reported on stderr (what the recipe counts, ops added,\n"
	 "removed and changed); a recipe that changes nothing warns (naming\n"
	 "the types or ops it was given that match nothing, and the nearest\n"
	 "ones) and still saves, unless --strict.\n"
	 "\n"
	 "  -o, --output OUT         where to save (required, but for\n"
	 "                           --overwrite)\n"
	 "  --overwrite              OUT may be MODEL (without -o, MODEL is\n"
	 "                           rewritten in place, atomically)\n"
	 "  --strict                 a recipe that changes nothing is an\n"
	 "                           error (exit 3, nothing saved)\n"
	 "  -p, --param KEY=VALUE    a recipe parameter; repeat for several\n"
	 "                           (a list parameter may be repeated)\n"
	 "  -f, --format F           format of OUT (default: from its name and\n"
	 "                           the input's format)\n"
	 "  -t, --tags T             SavedModel tag set to read (default serve)\n"
	 "  --allow-missing-variables  accepted for old scripts: a SavedModel\n"
	 "                           without variables/ loads and saves as it is\n"
	 "  --functions WHICH        the function bodies the recipe runs on:\n"
	 "                           reachable (default), all or none\n"
	 "  --quantize Q             OUT a TensorFlow.js model: store float32\n"
	 "                           weights as uint8, uint16 or float16, as\n"
	 "                           convert does\n"
	 "  --quantize-weights P,... only the weights matching these patterns\n"
	 "  --verify                 run OUT against MODEL on seeded inputs\n"
	 "                           (as " PROG " verify does) and check what\n"
	 "                           the recipe declares of its numerics:\n"
	 "                           exact (bit-equal), rounding (atol and\n"
	 "                           rtol 1e-5), lossy (relative error up to\n"
	 "                           its bound), changes (figures only)\n"
	 "  --max-error X            a lossy recipe's bound instead of its own\n"
	 "  -i, --input NAME=VALUE   an input --verify runs on, as for eval\n"
	 "  --dim N                  --verify's unknown dims of seeded inputs\n"
	 "  --provenance HOW         an op made from others always lists them\n"
	 "                           in experimental_debug_info (field); attr\n"
	 "                           also writes the rule that made it in its\n"
	 "                           _gerewrite_rule attr, list reports each\n"
	 "                           such op with its rule; off sets none\n"
	 "                           (the input's own fields are kept)\n"
	 "\n"
	 "Exit status: 0 saved (a recipe that changed nothing too, with a\n"
	 "warning), 1 the recipe failed (or --verify found the output outside\n"
	 "what the recipe declares), 2 usage or I/O error, 3 the recipe\n"
	 "does not load, or changed nothing under --strict.  " PROG " help\n"
	 "RECIPE describes one.\n"},
	{"batch", cmd_batch, "run a recipe over directories of models",
	 "Usage: " PROG " batch RECIPE DIR... (-o OUTDIR | --overwrite) [-j N]\n"
	 "           [--param K=V]... [--report FILE] [--report-dir DIR]\n"
	 "           [--shard I/N | --shard auto [--shard-count N]] [--resume]\n"
	 "           [--strict] [--format F] [--tags T]\n"
	 "           [--allow-missing-variables] [--functions reachable|all|none]\n"
	 "           [--verify] [--max-error X] [--provenance field|off]\n"
	 "\n"
	 "Runs RECIPE on every model found under the DIRs (SavedModel\n"
	 "directories; files named .pb, .pbtxt, .pbtext, .meta, .graphdef;\n"
	 "TensorFlow.js model .json files; other files whose content is a\n"
	 "GraphDef or MetaGraphDef), each in its own process, and writes the\n"
	 "results under OUTDIR with the same layout.  A TensorFlow.js result\n"
	 "is a directory with its shards: a/m.json becomes a/m/model.json\n"
	 "(a/model.json stays).  Files named like models that hold something\n"
	 "else (an OpList, a config) and chunked SavedModels are skipped, with\n"
	 "the reason.\n"
	 "\n"
	 "  -o, --output OUTDIR      where the results go (required, but for\n"
	 "                           --overwrite)\n"
	 "  --overwrite              rewrite each model in place, atomically\n"
	 "                           (without -o), or let an output be its\n"
	 "                           input\n"
	 "  --strict                 a model the recipe does not change fails\n"
	 "  --provenance off         no op gains experimental_debug_info (field,\n"
	 "                           the default, lists what each op was made\n"
	 "                           from, as for run)\n"
	 "  -j, --jobs N             worker processes (default 1)\n"
	 "  -p, --param KEY=VALUE    a recipe parameter, as for run\n"
	 "  --report FILE            write a JSON report of every model: its\n"
	 "                           status, ops before and after (function\n"
	 "                           bodies included), what changed, its\n"
	 "                           warnings, the reason of a skip, time in ms\n"
	 "  --report-dir DIR         write the report to DIR/report-I.json\n"
	 "                           (I of --shard I/N), for report merge;\n"
	 "                           with --resume a model done before keeps\n"
	 "                           its entry (from that report, or the\n"
	 "                           journal of a run that was killed)\n"
	 "  --shard I/N              only the I-th of N shares of the models:\n"
	 "                           those whose path below DIR hashes to I-1\n"
	 "                           modulo N (the high 32 bits of FNV-1a\n"
	 "                           64), so a model added moves no other\n"
	 "  --shard auto             I and N from a cluster engine's array\n"
	 "                           variables (Slurm, Kubernetes Indexed\n"
	 "                           Jobs, AWS Batch, Google Cloud Batch,\n"
	 "                           Cloud Run jobs, SGE, LSF); the default\n"
	 "                           when they are set (said on stderr)\n"
	 "  --shard-count N          the count of tasks for an engine that\n"
	 "                           gives only the index (Kubernetes; or\n"
	 "                           GEREWRITE_SHARD_COUNT=N)\n"
	 "  --resume                 skip models whose output exists\n"
	 "  -f, --format F           format of the outputs\n"
	 "  -t, --tags T             SavedModel tag set to read\n"
	 "  --allow-missing-variables  as for run\n"
	 "  --functions WHICH        function bodies to run on, as for run\n"
	 "  -q, --quiet              no progress line, no warnings (the\n"
	 "                           report keeps them)\n"
	 "  --timeout SECONDS        give each model at most this long\n"
	 "  --max-memory SIZE        hold each worker to this much memory\n"
	 "  --verify, --max-error X  check each output as run --verify does;\n"
	 "                           the report gets the figures per model\n"
	 "\n"
	 "Exit status: 0 all models done or skipped, 1 some failed, 2 usage\n"
	 "error, "
	 "3 the recipe does not load.\n"},
	{"report", cmd_report, "merge the reports of a sharded batch",
	 "Usage: " PROG " report merge DIR [-o FILE] [-q]\n"
	 "\n"
	 "Joins the reports the tasks of a batch wrote with --report-dir DIR\n"
	 "(report-I.json for shard I of N) into one: the report a single\n"
	 "process running the whole batch writes, its timings aside (those of\n"
	 "each task are under \"timings\").  Every shard must have reported\n"
	 "once, for the same recipe and parameters, each model in one report\n"
	 "only: the missing shards are named.\n"
	 "\n"
	 "  -o, --output FILE        write the merged report to FILE\n"
	 "                           (default: standard output)\n"
	 "  -q, --quiet              no summary line\n"
	 "\n"
	 "Exit status: 0 every model done or skipped, 1 some failed, 2 a\n"
	 "report is missing, unreadable or does not fit the others.\n"},
	{"eval", cmd_eval, "run a model and print its outputs",
	 "Usage: " PROG " eval MODEL [--signature NAME] [--input NAME=VALUE]...\n"
	 "           [--output NAME]... [--dim N] [--seed N] [-o DIR]\n"
	 "           [--tags T] [--max-iterations N] [--values N]\n"
	 "           [--repeat N] [--stats]\n"
	 "\n"
	 "Runs MODEL (a frozen graph, a MetaGraphDef beside its checkpoint, a\n"
	 "SavedModel, TF1 or TF2, or a TensorFlow.js model) without\n"
	 "TensorFlow and prints each output: name, dtype and shape, min, max,\n"
	 "mean and its first values.  Inputs and outputs are those of the\n"
	 "signature (default serving_default, or the only one), of a\n"
	 "TensorFlow.js model's signature, or else the graph's placeholders\n"
	 "and the ops nobody reads.\n"
	 "\n"
	 "  -i, --input NAME=VALUE   a value for input NAME (a signature key\n"
	 "                           or a tensor name); VALUE is a literal\n"
	 "                           (3.5, [1,2,5], [[1,2],[3,4]], true,\n"
	 "                           \"text\"), @FILE.npy, or seeded data\n"
	 "                           SHAPE[:DTYPE][:LO..HI] (1x224x224x3,\n"
	 "                           2x3:int32:0..9; 3: is the shape [3])\n"
	 "  --output NAME            fetch this output (or any tensor);\n"
	 "                           repeat for several (default: all)\n"
	 "  -s, --signature NAME     the signature to run\n"
	 "  --dim N                  unknown dims of seeded inputs (default 1)\n"
	 "  --seed N                 seed of the seeded inputs and of\n"
	 "                           unseeded random ops (default 0)\n"
	 "  -o, --out DIR            write each output to DIR/NAME.npy\n"
	 "  --max-iterations N       stop a while loop after N iterations\n"
	 "  -n, --values N           values printed per output (default 8)\n"
	 "  -t, --tags T             SavedModel tag set to read\n"
	 "  --repeat N               run N times (the outputs of the last)\n"
	 "  --stats                  say on stderr the best and median run\n"
	 "                           time, the peak of live tensors, the work\n"
	 "\n"
	 "Inputs not given get seeded data of their shape: floats in [0, 1),\n"
	 "integers in [0, 9], the same for the same --seed on any machine;\n"
	 "a PlaceholderWithDefault not given takes its default.\n"
	 "\n"
	 "Exit status: 0 done, 2 the model or an input is wrong or an op\n"
	 "cannot run (one line names the input or op; nothing is written).\n"},
	{"verify", cmd_verify, "run two models on the same inputs and compare",
	 "Usage: " PROG " verify A B [--input NAME=VALUE]... [--output NAME]...\n"
	 "           [--atol X] [--rtol X] [--map A_NAME=B_NAME]... [--seed N]\n"
	 "           [--dim N] [--signature S] [--signature-b S] [--per-op]\n"
	 "           [--report FILE.json] [-q]\n"
	 "\n"
	 "Runs A and B (say a model and its rewrite) on the same inputs, given\n"
	 "as for eval or seeded, pairs their outputs by signature key or name,\n"
	 "and prints per output the largest absolute and relative difference\n"
	 "of B from A, the mean absolute difference, the cosine similarity and\n"
	 "how many elements are outside |b - a| <= atol + rtol * |a|.\n"
	 "\n"
	 "  --atol X                 absolute tolerance (default 1e-5)\n"
	 "  --rtol X                 relative tolerance (default 1e-5)\n"
	 "  --map A_NAME=B_NAME      pair an input or output of A with one of\n"
	 "                           B named otherwise; repeat for several\n"
	 "  --per-op                 also compare every tensor both models\n"
	 "                           compute under the same name, and name the\n"
	 "                           first op (in B's execution order) whose\n"
	 "                           output leaves tolerance\n"
	 "  --report FILE.json       write the figures as JSON\n"
	 "  -q, --quiet              print nothing, only set the exit status\n"
	 "  -i, --input NAME=VALUE   an input of both, as for eval\n"
	 "  --output NAME            compare this output of A (default: all)\n"
	 "  -s, --signature NAME     A's signature (and B's, unless given)\n"
	 "  --signature-b NAME       B's signature\n"
	 "  --dim N                  unknown dims of seeded inputs (default 1)\n"
	 "  --seed N                 seed of the seeded inputs (default 0)\n"
	 "  -t, --tags T             SavedModel tag set to read\n"
	 "  --max-iterations N       stop a while loop after N iterations\n"
	 "\n"
	 "Exit status: 0 within tolerance, 1 outside, 2 error.\n"},
	{"compose", cmd_compose, "join two models: B reads A's outputs",
	 "Usage: " PROG " compose A B -o OUT --map A_TENSOR=B_INPUT...\n"
	 "           [--prefix P] [--format F] [--tags T]\n"
	 "\n"
	 "Writes one model where B's inputs read A's tensors: A as it is\n"
	 "(its container, signatures and variables), B imported under the\n"
	 "prefix P (default b).  Each mapped pair must have the same dtype\n"
	 "and shapes that agree.  OUT's serving_default signature takes A's\n"
	 "inputs and B's outputs (their serving_default's, else A's\n"
	 "placeholders and the ops of B nothing reads).  B's TF1 variables\n"
	 "come along under P, with their checkpoint values; a TF2\n"
	 "SavedModel B is composed frozen; into a TF2 SavedModel A, B must\n"
	 "hold no variables.  Models of any two formats that load compose.\n"
	 "\n"
	 "  -m, --map A_TENSOR=B_INPUT  feed B's input with A's tensor;\n"
	 "                           repeat for several\n"
	 "  -p, --prefix P           the scope of B's ops (default b)\n"
	 "  -o, --output OUT         where to save (required)\n"
	 "  -f, --format F           format of OUT (as for convert)\n"
	 "  -t, --tags T             SavedModel tag set to read\n"
	 "\n"
	 "Exit status: 0 written, 2 a model unreadable, a tensor missing or\n"
	 "not fitting (one line names it; nothing is written).\n"},
	{"extract", cmd_extract, "cut a servable out of a model",
	 "Usage: " PROG " extract MODEL --outputs T,... [--inputs T,...]\n"
	 "           -o OUT [--format F] [--tags T]\n"
	 "\n"
	 "Writes what the outputs need, from the inputs on: each input\n"
	 "tensor becomes a Placeholder (named as its op), every op the\n"
	 "outputs do not need goes, and a serving_default signature names\n"
	 "the inputs and outputs (keys: their names, '/' and ':' as '_').\n"
	 "OUT is a SavedModel directory, or a GraphDef when it ends in .pb\n"
	 "or .pbtxt.  From a TF2 SavedModel, the tensors may be those of\n"
	 "a signature (as info shows them) or of its functions' bodies,\n"
	 "named by the calls that lead to them (StatefulPartitionedCall/\n"
	 "StatefulPartitionedCall/model/dense/Relu:0); the servable is cut\n"
	 "from that signature frozen, its variables constants.\n"
	 "\n"
	 "  -i, --inputs T,...       where the servable starts (repeatable)\n"
	 "  --outputs T,...          what it computes (repeatable; required)\n"
	 "  -o, --output OUT         where to save (required)\n"
	 "  -f, --format F           format of OUT (as for convert)\n"
	 "  -t, --tags T             SavedModel tag set to read\n"
	 "\n"
	 "Exit status: 0 written, 2 MODEL unreadable or a tensor missing or\n"
	 "given twice (one line names it; nothing is written).\n"},
	{"convert", cmd_convert, "convert a model between formats",
	 "Usage: " PROG " convert IN OUT [--format F] [--tags T] [--overwrite]\n"
	 "           [--allow-missing-variables] [--no-verify]\n"
	 "           [--shard-size BYTES]\n"
	 "           [--quantize uint8|uint16|float16|none]\n"
	 "           [--quantize-weights PATTERN,...]\n"
	 "\n"
	 "Reads IN (any supported format, found by content) and writes OUT,\n"
	 "atomically; OUT is not written if anything fails.  Without --format\n"
	 "the kind of model stays and the encoding follows OUT's name: .pbtxt\n"
	 "and .txt are text, .pb and .meta binary, .json a TensorFlow.js graph\n"
	 "model (model.json and group1-shardKofN.bin in its directory; a graph\n"
	 "with variables is refused: freeze first).  A SavedModel saved to a\n"
	 "name ending .pb or .pbtxt gives its GraphDef.\n"
	 "\n"
	 "  -f, --format F   graphdef, graphdef-text, meta, meta-text,\n"
	 "                   savedmodel, savedmodel-text, tfjs\n"
	 "  --shard-size N   tfjs: bytes per weight shard (default 4194304)\n"
	 "  --quantize Q     tfjs: store float32 weights as uint8 or uint16\n"
	 "                   (affine) or float16; none stores every weight as\n"
	 "                   is (default: as the loaded model stored them)\n"
	 "  --quantize-weights P,...  tfjs: only the weights whose names match\n"
	 "                   one of these shell patterns\n"
	 "  -t, --tags T     SavedModel tag set to read (default serve)\n"
	 "  --allow-missing-variables  accepted for old scripts: a SavedModel\n"
	 "                   without variables/ converts as it is\n"
	 "  --no-verify      do not check the SavedModel's checkpoint\n"
	 "  --overwrite      OUT may be IN: IN is replaced, atomically\n"
	 "\n"
	 "Exit status: 0 written, 2 IN unreadable or OUT not written.\n"},
	{"validate", cmd_validate, "check a model and list its problems",
	 "Usage: " PROG " validate MODEL... [--format F] [--tags T] [--no-verify]\n"
	 "           [-q]\n"
	 "\n"
	 "Lists the problems of each MODEL on standard output, one per line,\n"
	 "each starting with the MODEL: dangling inputs, bad output indices,\n"
	 "duplicate names, cycles, colocation with missing ops, attrs that do\n"
	 "not match their op's definition, a SavedModel without its\n"
	 "variables, a corrupt checkpoint (unless --no-verify).\n"
	 "\n"
	 "  -q, --quiet      say nothing of a valid model\n"
	 "  --no-verify      do not check the SavedModel's checkpoint\n"
	 "  -f, --format F   read MODEL as this format (default: by content)\n"
	 "  -t, --tags T     SavedModel tag set to read (default serve)\n"
	 "\n"
	 "Exit status: 0 all valid, 1 problems found, 2 a MODEL unreadable.\n"},
	{"info", cmd_info, "describe a model",
	 "Usage: " PROG " info MODEL [--format F] [--tags T] [--top N]\n"
	 "       " PROG " info MODEL --ops [--scope S] [--type T,...]\n"
	 "\n"
	 "Prints the format, sizes, ops by type (most frequent first), likely\n"
	 "inputs (Placeholders, ops reading nothing) and outputs (the\n"
	 "signatures', else the ops nobody reads but training, optimizer,\n"
	 "saver and bookkeeping ops; never an input), variables, collections,\n"
	 "signatures and functions.  With --ops it lists ops instead, one a\n"
	 "line in node order, with the dtype and shape of each output\n"
	 "(inferred where the graph records none).\n"
	 "\n"
	 "  --top N         list at most N op types and N functions (default\n"
	 "                  all types, 20 functions)\n"
	 "  --ops           list the ops with their output dtypes and shapes\n"
	 "  -s, --scope S   list only the ops of name scope S (implies --ops)\n"
	 "  --type T,...    list only the ops of these types (implies --ops)\n"
	 "  -f, --format F  read MODEL as this format (default: by content)\n"
	 "  -t, --tags T    SavedModel tag set to read (default serve)\n"},
	{"diff", cmd_diff, "compare two models op by op",
	 "Usage: " PROG " diff A B [--tags T] [-q] [--json]\n"
	 "           [--html OUT [--verify]]\n"
	 "\n"
	 "Lists the ops only in A (-), only in B (+), in both but changed\n"
	 "(~: type, inputs, control inputs, device, attrs with both values)\n"
	 "and moved (>: an op of B made from an op of A of another name),\n"
	 "matching ops by name and by provenance (the original_node_names of\n"
	 "B's ops); an op of A folded into one of B says \"-> into\" it.\n"
	 "Then functions, collections, signatures and checkpoint entries.\n"
	 "\n"
	 "  --html OUT    also write a page: both graphs side by side (needs\n"
	 "                Graphviz), the ops that differ coloured and linked\n"
	 "  --json        the differences as one JSON object, for programs\n"
	 "  --verify      with --html: run A and B on the same seeded inputs\n"
	 "                and show the differences per output and tensor\n"
	 "  -q, --quiet   print nothing, only set the exit status\n"
	 "  -t, --tags T  SavedModel tag set to read (default serve)\n"
	 "\n"
	 "Exit status: 0 same graph, 1 different, 2 error.\n"},
	{"dot", cmd_dot, "draw a model with Graphviz",
	 "Usage: " PROG " dot MODEL [--scope S] [--collapse N] [--highlight X]\n"
	 "           [--func F] [-o OUT]\n"
	 "\n"
	 "Draws the graph: name scopes as boxes around their ops, each op\n"
	 "labelled with its name within its scope and its type, data edges\n"
	 "with the tensor's dtype and shape, control edges dashed, and a\n"
	 "legend.  Writes Graphviz's DOT language to standard output, or to\n"
	 "OUT in the format its extension names: .dot or .gv (text), .svg,\n"
	 ".png or .pdf (through Graphviz's dot program).\n"
	 "\n"
	 "  -s, --scope S       only the ops in name scope S (with the ops\n"
	 "                      feeding or reading them drawn as grey\n"
	 "                      ellipses); an unknown S is an error that names\n"
	 "                      the nearest scopes\n"
	 "  --collapse N        draw about N boxes: scopes are drawn as one\n"
	 "                      node with their op count, the biggest opened\n"
	 "                      until the picture has about N\n"
	 "  --highlight X       colour ops: X is a model (ops added or changed\n"
	 "                      since it are coloured, e.g. the model a recipe\n"
	 "                      started from), a file of op names (one a line)\n"
	 "                      or a comma-separated list of op names\n"
	 "  --func F            draw the body of function F of the library\n"
	 "  -t, --tags T        SavedModel tag set to read (default serve)\n"
	 "  -o, --output OUT    where to write (.dot, .gv, .svg, .png, .pdf)\n"},
	{"help", cmd_help, "show this help, a command's or a recipe's", NULL},
	{"version", cmd_version, "show the version", NULL},
	{NULL, NULL, NULL, NULL},
};

/* The usage text of a command (cli_command_usage, through cli_usage_of). */
static const char *command_usage(const char *name)
{
	for (const struct subcommand *c = subcommands; c->name; c++)
		if (!strcmp(c->name, name))
			return c->usage;
	return NULL;
}

static void print_usage(lua_State *L, FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS] [SCRIPT [ARGS...]]\n"
		"       " PROG " -i [OPTIONS] [MODEL [ARGS...]]\n"
		"       " PROG " COMMAND [ARGS...]\n"
		"\n"
		"Rewrites TensorFlow graphs with Lua scripts.\n"
		"\n"
		"  SCRIPT       a Lua file to run, '-' for standard input; its\n"
		"               arguments are in the table `arg` (arg[0] is "
		"SCRIPT)\n"
		"               and in `...`\n"
		"  -e CODE      run CODE; may be repeated, runs in order, "
		"before SCRIPT\n"
		"  -l [G=]MOD   G = require \"MOD\" (G is MOD if not given; "
		"in order with -e)\n"
		"  -i           start the interactive prompt after the rest; "
		"with -i a\n"
		"               first argument that does not end in .lua (and "
		"is not -)\n"
		"               is a MODEL, loaded as the global `g` before -e "
		"runs\n"
		"  --traceback  add a stack traceback to error messages\n"
		"  --max-memory SIZE  (first) the memory budget of what a model "
		"makes\n"
		"               the program expand (default 512M)\n"
		"  --max-work N (first) the work budget of one computation "
		"(a fold, an\n"
		"               evaluation), in multiply-adds or elements "
		"touched (default 1G)\n"
		"  --           stop handling options\n"
		"  -h, --help   show this help and exit\n"
		"  --version    show the version and exit\n"
		"\n"
		"Commands (" PROG " help COMMAND for details):\n");
	for (const struct subcommand *c = subcommands; c->name; c++)
		fprintf(f, "  %-12s %s\n", c->name, c->summary);
	fprintf(f, "\nRecipes (" PROG " help RECIPE for details):\n");
	if (L)
		cli_list_recipes(L, f);
	fprintf(f,
		"\n"
		"The module is require \"gerewrite\", also bound to the global "
		"`ge`.\n"
		"With no SCRIPT and no -e, the prompt starts when standard "
		"input is a\n"
		"terminal; otherwise standard input is run as a script.\n"
		"\n"
		"Exit status: 0 success, 1 a script raised an error, 2 usage "
		"or I/O\n"
		"error, 3 a script did not compile.\n"
		"\n"
		"Environment:\n"
		"  GEREWRITE_PATH         directories searched for recipes "
		"first (':' between)\n"
		"  GEREWRITE_TRACEBACK=1  as --traceback\n"
		"  GEREWRITE_MAX_MEMORY   as --max-memory\n"
		"  GEREWRITE_MAX_WORK     as --max-work\n"
		"  GEREWRITE_HISTORY      the prompt's history file "
		"(~/.gerewrite_history)\n"
		"  GEREWRITE_LUA_DIR      read the built-in Lua files from "
		"this directory\n"
		"                         (for development: src/lua)\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs(PROG ": ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry '" PROG " --help'.\n", stderr);
	return EXIT_USAGE;
}

/* ------------------------------------------------------------ running */

/* Reads all of a stream into a buffer. */
static int read_stream(FILE *f, ge_buf *b)
{
	char tmp[8192];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		ge_buf_add(b, tmp, n);
	return ferror(f) ? -1 : 0;
}

/* [-0, +1, -] Loads a script ("-" is standard input).  Returns 0 with
 * the chunk pushed, or an exit code with the message pushed. */
static int load_script(lua_State *L, const char *path)
{
	ge_buf b = GE_BUF_INIT;
	ge_error err;
	const char *chunkname;
	if (!strcmp(path, "-")) {
		if (read_stream(stdin, &b) < 0) {
			ge_buf_free(&b);
			lua_pushfstring(L, "stdin: %s", strerror(errno));
			return EXIT_USAGE;
		}
		chunkname = lua_pushstring(L, "=stdin");
	} else {
		uint8_t *data;
		size_t len;
		if (ge_file_read(path, &data, &len, &err) != GE_OK) {
			lua_pushstring(L, err.msg);
			return EXIT_USAGE;
		}
		b.data = data;
		b.len = b.cap = len;
		chunkname = lua_pushfstring(L, "@%s", path);
	}
	/* A first line starting with '#' (#!/usr/bin/env gerewrite) is not
	 * Lua; its newline stays so line numbers are right. */
	size_t skip = 0;
	if (b.len && b.data[0] == '#')
		while (skip < b.len && b.data[skip] != '\n')
			skip++;
	int st = luaL_loadbufferx(L, (const char *)b.data + skip, b.len - skip,
				  chunkname, "t");
	/* `gerewrite model.pb` is a likely slip for `gerewrite -i model.pb` */
	int model = st == LUA_ERRSYNTAX && strcmp(path, "-") != 0 &&
		    ge_sniff(b.data, b.len) != GE_FMT_AUTO;
	ge_buf_free(&b);
	lua_remove(L, -2);
	if (st == LUA_OK)
		return 0;
	if (model) {
		lua_pop(L, 1);
		lua_pushfstring(L,
				"%s: a model, not a Lua script (to explore it: "
				PROG " -i %s)",
				path, path);
		return EXIT_USAGE;
	}
	return st == LUA_ERRSYNTAX ? EXIT_SYNTAX : EXIT_RUNTIME;
}

/* Runs a loaded chunk (at the top, with narg arguments above it). */
static int run_chunk(lua_State *L, int narg)
{
	if (cli_docall(L, narg, 0) != LUA_OK) {
		cli_report(L);
		return EXIT_RUNTIME;
	}
	return 0;
}

static int run_string(lua_State *L, const char *code)
{
	if (luaL_loadbufferx(L, code, strlen(code), "=(command line)", "t") !=
	    LUA_OK) {
		cli_report(L);
		return EXIT_SYNTAX;
	}
	return run_chunk(L, 0);
}

/* -l NAME or -l GLOBAL=NAME */
static int run_require(lua_State *L, const char *spec)
{
	const char *eq = strchr(spec, '=');
	const char *mod = eq ? eq + 1 : spec;
	lua_getglobal(L, "require");
	lua_pushstring(L, mod);
	if (cli_docall(L, 1, 1) != LUA_OK) {
		cli_report(L);
		return EXIT_RUNTIME;
	}
	if (eq)
		lua_pushlstring(L, spec, (size_t)(eq - spec));
	else
		lua_pushstring(L, spec);
	lua_insert(L, -2);
	lua_setglobal(L, lua_tostring(L, -2));
	lua_pop(L, 1);
	return 0;
}

/* ------------------------------------------------------------ main */

struct options {
	int interactive;
	int script;  /* argv index of SCRIPT or MODEL, or 0 */
	int model;   /* argv[script] is a model (with -i) */
	int has_e;   /* -e or -l given */
	int help;    /* -h or --help */
};

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* First pass: checks the options and finds SCRIPT.  Returns 0, -1 for
 * --version (handled), or an exit code. */
static int collect(int argc, char **argv, struct options *o)
{
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !strcmp(a, "-")) {
			o->script = i;
			break;
		}
		if (!strcmp(a, "--")) {
			if (i + 1 < argc)
				o->script = i + 1;
			break;
		}
		if (!strcmp(a, "-i")) {
			o->interactive = 1;
		} else if (!strcmp(a, "--traceback")) {
			cli_traceback = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			o->help = 1;
			return 0;
		} else if (!strcmp(a, "--version")) {
			cmd_version(NULL, 0, NULL);
			return -1;
		} else if (!strncmp(a, "-e", 2) || !strncmp(a, "-l", 2)) {
			o->has_e = 1;
			if (a[2] == 0) {
				if (i + 1 >= argc)
					return usage_error("option '%s' needs an "
							   "argument",
							   a);
				i++;
			}
		} else {
			return usage_error("unknown option '%s'", a);
		}
	}
	if (o->script && o->interactive && strcmp(argv[o->script], "-") != 0 &&
	    !ends_with(argv[o->script], ".lua"))
		o->model = 1;
	return 0;
}

/* arg[0] is SCRIPT, arg[1..] its arguments, arg[-k] what came before. */
static void create_arg_table(lua_State *L, int argc, char **argv, int script)
{
	int zero = script ? script : argc;
	lua_createtable(L, argc - zero, zero);
	for (int i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - zero);
	}
	lua_setglobal(L, "arg");
}

static int load_model(lua_State *L, const char *path)
{
	ge_graph *g;
	int rc = cli_load_model(path, &(struct cli_model_opts){
						.allow_missing_variables = 1},
				&g);
	if (rc)
		return rc;
	lge_pushgraph(L, g);
	if (isatty(STDIN_FILENO)) {
		printf("g = %s\n", luaL_tolstring(L, -1, NULL));
		lua_pop(L, 1);
	}
	lua_setglobal(L, "g");
	return 0;
}

/* [-0, +0, -] Loads the module and binds the global ge; 0 or an exit
 * code (the error reported). */
static int open_module(lua_State *L)
{
	luaL_openlibs(L);
	lge_preload(L);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "gerewrite");
	if (cli_docall(L, 1, 1) != LUA_OK) {
		cli_report(L);
		return EXIT_RUNTIME;
	}
	lua_setglobal(L, "ge");
	return 0;
}

static int run_main(lua_State *L, int argc, char **argv)
{
	int rc;
	if (argc > 1) {
		for (const struct subcommand *c = subcommands; c->name; c++)
			if (!strcmp(argv[1], c->name))
				return (rc = open_module(L)) ? rc
							    : c->run(L, argc - 1,
								     argv + 1);
	}
	struct options o;
	if ((rc = collect(argc, argv, &o)))
		return rc < 0 ? 0 : rc;
	if ((rc = open_module(L)))
		return rc;
	if (o.help) {
		print_usage(L, stdout);
		return 0;
	}
	create_arg_table(L, argc, argv, o.script);
	if (o.model && (rc = load_model(L, argv[o.script])))
		return rc;
	int end = o.script ? o.script : argc;
	for (int i = 1; i < end; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (strncmp(a, "-e", 2) != 0 && strncmp(a, "-l", 2) != 0)
			continue;
		const char *val = a[2] ? a + 2 : argv[++i];
		rc = a[1] == 'e' ? run_string(L, val) : run_require(L, val);
		if (rc)
			return rc;
	}
	if (o.script && !o.model) {
		if ((rc = load_script(L, argv[o.script]))) {
			cli_report(L);
			return rc;
		}
		int n = argc - o.script - 1;
		luaL_checkstack(L, n + 3, "too many arguments to script");
		for (int i = o.script + 1; i < argc; i++)
			lua_pushstring(L, argv[i]);
		if ((rc = run_chunk(L, n)))
			return rc;
	}
	if (o.interactive || (!o.script && !o.has_e && isatty(STDIN_FILENO))) {
		return cli_repl(L);
	} else if (!o.script && !o.has_e) {
		if ((rc = load_script(L, "-"))) {
			cli_report(L);
			return rc;
		}
		return run_chunk(L, 0);
	}
	return 0;
}

static int pmain(lua_State *L)
{
	int argc = (int)lua_tointeger(L, 1);
	char **argv = lua_touserdata(L, 2);
	const char *tb = getenv("GEREWRITE_TRACEBACK");
	if (tb && *tb && strcmp(tb, "0") != 0)
		cli_traceback = 1;
	luaL_checkversion(L);
	lua_gc(L, LUA_GCRESTART);
	lua_gc(L, LUA_GCGEN, 0, 0);
	lua_pushinteger(L, run_main(L, argc, argv));
	return 1;
}

static int warnf_on;
static void warnf(void *ud, const char *msg, int tocont)
{
	(void)ud;
	/* "@on" / "@off" control messages, as in lua.c */
	if (!tocont && *msg == '@') {
		if (!strcmp(msg, "@off"))
			warnf_on = 0;
		else if (!strcmp(msg, "@on"))
			warnf_on = 1;
		return;
	}
	if (warnf_on)
		fprintf(stderr, "%s%s", msg, tocont ? "" : "\n");
}

/* Which global option argv[1] is (0: none), and its value in *v with
 * the words it takes in *used. */
static int global_option(int argc, char **argv, const char **v, int *used)
{
	static const char *const names[] = {"--max-memory", "--max-work"};
	for (int k = 0; k < 2; k++) {
		size_t l = strlen(names[k]);
		if (strncmp(argv[1], names[k], l))
			continue;
		*v = NULL;
		*used = 1;
		if (argv[1][l] == '=')
			*v = argv[1] + l + 1;
		else if (!argv[1][l] && argc > 2)
			*v = argv[2], *used = 2;
		else if (argv[1][l])
			return 0;
		return k + 1;
	}
	return 0;
}

/* `gerewrite --max-memory SIZE --max-work N ...`: the budgets for
 * everything the run expands and computes (see lib/base/bounds.h); removed
 * from argv.  -1 on a bad value. */
static int global_options(int *argc, char **argv)
{
	const char *v;
	int used, which;
	while (*argc > 1 && (which = global_option(*argc, argv, &v, &used))) {
		uint64_t n;
		if (!v || ge_parse_size(v, &n) || !n) {
			if (which == 1)
				cli_errmsg("--max-memory: bad size '%s' (a "
					   "number of bytes, with K, M or G)",
					   v ? v : "");
			else
				cli_errmsg("--max-work: bad count '%s' (a "
					   "number of units, with K, M or G)",
					   v ? v : "");
			return -1;
		}
		if (which == 1)
			ge_set_max_memory(n);
		else
			ge_set_max_work(n);
		memmove(argv + 1, argv + 1 + used,
			(size_t)(*argc - used) * sizeof *argv);
		*argc -= used;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (global_options(&argc, argv))
		return EXIT_USAGE;
	cli_usage_of = command_usage;
	/* every command folds and evaluates on the runner's kernels */
	ge_xfold_install();
	cli_lua_limit = SIZE_MAX;
	if (ge_max_memory_given() && ge_max_memory() < SIZE_MAX)
		cli_lua_limit = (size_t)ge_max_memory();
	lua_State *L = lua_newstate(cli_lua_alloc, NULL);
	if (L)
		lua_setwarnf(L, warnf, NULL);
	if (!L) {
		cli_errmsg("cannot create the Lua state: not enough memory");
		return EXIT_RUNTIME;
	}
	lua_gc(L, LUA_GCSTOP); /* not while building the state */
	lua_pushcfunction(L, pmain);
	lua_pushinteger(L, argc);
	lua_pushlightuserdata(L, argv);
	int status = lua_pcall(L, 2, 1, 0);
	int code;
	if (status != LUA_OK) {
		cli_report(L);
		code = EXIT_RUNTIME;
	} else {
		code = (int)lua_tointeger(L, -1);
	}
	/* After a run that succeeded the graphs are not freed op by op, nor
	 * the Lua heap block by block (a few ms each on a large graph): the
	 * exit gives their memory back at once.  lua_close still runs every
	 * finalizer (files of the io library, user __gc), and temp files are
	 * removed as before.  The sanitizer build, and GEREWRITE_TEARDOWN=1
	 * (for a leak checker such as valgrind), free everything. */
#ifndef GE_ASAN
	const char *td = getenv("GEREWRITE_TEARDOWN");
	if (code == 0 && !(td && *td && strcmp(td, "0") != 0))
		lge_at_exit = cli_lua_exiting = 1;
#endif
	lua_close(L);
	cli_lua_heap_release();
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_errmsg("error writing the output: %s", strerror(errno));
		if (code == 0)
			code = EXIT_USAGE;
	}
	return code;
}
