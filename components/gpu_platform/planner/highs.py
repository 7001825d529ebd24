"""One integer program on HiGHS through `highspy`: a starting plan, a time limit, the dual bound read back.

`scipy.optimize.milp` runs the same solver but takes no starting solution, so HiGHS spent most of a large
group's time rediscovering the plan the planner already had. Here the known plan is handed over with
`Highs.setSolution` (highspy 1.15, `highspy/highs.py`), the search stops as soon as the incumbent is within
the relative gap of HiGHS's own dual bound, or of a lower bound proven outside it (`floor`, through the MIP
interrupt callback), and the dual bound is returned so a caller can report a true gap.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import highspy
import numpy as np
from scipy.sparse import csc_array, csr_array

__all__ = ["solve_mip", "ColumnLP", "Race", "SolverThread"]

# Once branch-and-price has joined a race, the listings' integer program stops when its incumbent has not improved
# for this long (since it joined, or since the last improvement), and branch-and-price's second lane takes the
# core. On the 64-tier scale benchmark the program ran 6 s (seed 4) and 10 s (seed 8) beside branch-and-price
# without a better plan; 20 generated 64-tier demands, three whole plans each, took 305 s in all with 1 s, 342 s
# with 2 s (seeds 3, 4, 7 and 16, three runs each: 1.5 s 125 s, 0.5 s 158 s). Figures in benchmarks/RESULTS.md.
_PATIENCE = 1.0
_LOG = bool(os.environ.get("GPU_PLATFORM_PLANNER_LOG"))  # HiGHS's own log on stdout, for profiling
# An integer program in a race runs none of HiGHS's sub-MIP heuristics. A sub-MIP calls no interrupt callback
# (HiGHS v1.15.1, highs/mip/HighsMipSolverData.cpp, checkLimits: `!mipsolver.submip`), and at the root of a
# listing these nest (root reduced cost, highs/mip/HighsPrimalHeuristics.cpp rootReducedCost -> solveSubMip;
# RENS; RINS in the tree): on the 64-tier scale benchmark's seed 18, 166 sub-MIPs, 12 deep, held the listings'
# program 6.5 s past branch-and-price's proof, and its second lane waited for that core: that plan took 3.6-4.0 s
# without them, 8.2-9.9 s with them. Over 20 generated 64-tier demands, back to back, 124 s in all against 158 s;
# on the other seeds the gain is within run-to-run spread (figures in benchmarks/RESULTS.md).
_SUB_MIPS = ("mip_heuristic_run_root_reduced_cost", "mip_heuristic_run_rens", "mip_heuristic_run_rins")


@dataclass
class Race:
    """What an integer program on one thread and branch-and-price on another tell each other: the cost of the
    best plan either has found, the best lower bound either has proven, and whether to stop. HiGHS releases
    the GIL while it solves, so the two searches use both cores."""

    best: float
    bound: float
    stop: bool = False
    listing: bool = False  # the listings' thread is still at work (a lane of branch-and-price waits for it)
    joined: float = 0.0  # when branch-and-price joined (perf_counter; 0: not yet): the listings then end after
    # their first program, or once it stalls

    @property
    def branching(self) -> bool:
        """Whether branch-and-price has joined."""
        return self.joined > 0


class SolverThread:
    """A solver thread beside the calling one that a Ctrl-C never leaves running unattended: it starts with
    Ctrl-C held back, and the caller waits for it through an `Event` it sets at its end.

    Not `Thread.join`: on Python 3.11 a join interrupted by Ctrl-C marks a thread that is still running as
    stopped (threading.py, `Thread._wait_for_tstate_lock`: on an exception it releases the running thread's lock
    and calls `_stop`), and the interpreter then exits without waiting for it: the process aborted (SIGABRT,
    "terminate called without an active exception") while HiGHS was running there, after a single Ctrl-C in the
    first half second of a race. Not a daemon thread either, for the same reason."""

    def __init__(self, target: Callable[[], None], name: str) -> None:
        self.done = threading.Event()

        def run() -> None:
            try:
                target()
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, name=name)

    def start(self) -> None:
        """Start it with Ctrl-C held back until `Thread.start` has returned (it waits for the new thread; an
        interrupt there would leave the thread running with nobody to stop it). After this, the thread is
        running or was never started."""
        if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
            self.thread.start()
            return
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.thread.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def wait(self, timeout: float | None = None) -> bool:
        """Whether it has ended, waiting at most `timeout` seconds (None: until it has)."""
        return self.done.wait(timeout)

    def wait_out(self) -> None:
        """After it was told to stop, wait until it has (its next check: HiGHS's next callback, or the search's
        next node), through any Ctrl-C meanwhile: the caller is already ending on an exception, and one more
        would only abandon the thread. At once when it was never started."""
        while self.thread.ident is not None:
            try:
                if self.done.wait(0.05):
                    return
            except KeyboardInterrupt:
                pass

    def join(self) -> None:
        """Once it has ended (`wait`): its thread's own end, at once."""
        self.thread.join()


@dataclass(frozen=True)
class MipResult:
    """What the search ended with: status, the best solution (None when it found none), its cost and bound."""

    status: str  # optimal | infeasible | limit
    x: np.ndarray | None
    cost: float
    bound: float


def solve_mip(
    cost: np.ndarray,
    a: csc_array,
    row_lo: np.ndarray,
    row_hi: np.ndarray,
    col_hi: np.ndarray,
    time_limit: float,
    rel_gap: float,
    start: np.ndarray | None = None,
    floor: float = -math.inf,
    threads: int = 1,
    race: Race | None = None,
) -> MipResult:
    """Min cost @ x with row_lo <= a @ x <= row_hi, 0 <= x <= col_hi, x integer.

    `start` is a feasible solution to begin from; `floor` a lower bound on the optimum known from elsewhere
    (the search stops once the incumbent is within `rel_gap` of it, and the bound returned is at least it).
    With `race`, the incumbent's cost is published there, the search also stops at its bound or signal, and it
    runs no sub-MIP heuristics (`_SUB_MIPS`), inside which HiGHS would not hear that signal.
    """
    h = highspy.Highs()  # type: ignore[no-untyped-call]  # highspy's Highs.__init__ is not annotated
    h.setOptionValue("output_flag", _LOG)
    h.setOptionValue("time_limit", max(float(time_limit), 0.05))
    h.setOptionValue("mip_rel_gap", rel_gap)
    h.setOptionValue("threads", threads)
    h.setOptionValue("random_seed", 0)
    for name in _SUB_MIPS if race is not None else ():
        h.setOptionValue(name, False)
    lp = highspy.HighsLp()
    a = csc_array(a)
    lp.num_col_, lp.num_row_ = a.shape[1], a.shape[0]
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost.astype(float), np.zeros(a.shape[1]), col_hi.astype(float)
    lp.row_lower_ = np.where(np.isinf(row_lo), -highspy.kHighsInf, row_lo).astype(float)
    lp.row_upper_ = np.where(np.isinf(row_hi), highspy.kHighsInf, row_hi).astype(float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_ = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    lp.a_matrix_.value_ = a.data.astype(float)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * a.shape[1]
    h.passModel(lp)
    if os.environ.get("GPU_PLATFORM_PLANNER_DUMP"):
        h.writeModel(f"{os.environ['GPU_PLATFORM_PLANNER_DUMP']}-{a.shape[1]}.mps")
    if start is not None:
        sol = highspy.HighsSolution()
        sol.col_value = list(map(float, start))
        sol.value_valid = True
        h.setSolution(sol)
    if floor > -math.inf or race is not None:
        _stop_at(h, floor, rel_gap, race)
    h.solve()
    status = h.getModelStatus()
    info = h.getInfo()
    if status == highspy.HighsModelStatus.kInfeasible:
        return MipResult("infeasible", None, math.inf, math.inf)
    has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value) if has_x else None
    value = float(info.objective_function_value) if has_x else math.inf
    bound = max(float(info.mip_dual_bound), floor, race.bound if race is not None else -math.inf)
    done = status == highspy.HighsModelStatus.kOptimal or (has_x and value <= bound + rel_gap * abs(value))
    return MipResult("optimal" if done else "limit", x, value, min(bound, value))


def _stop_at(h: highspy.Highs, floor: float, rel_gap: float, race: Race | None = None) -> None:
    """Interrupt the search once its incumbent is within `rel_gap` of `floor` (a proven lower bound), or of the
    bound `race` holds, or when `race` says stop."""
    improved = [math.inf, time.perf_counter()]  # the incumbent's cost, and when it was last improved

    def check(event: highspy.highs.HighsCallbackEvent) -> None:
        value = event.data_out.mip_primal_bound  # the incumbent's cost (inf before the first)
        low = floor
        now = time.perf_counter()
        if value < improved[0] - 1e-9 * abs(value):  # a better plan, not the same one in other rounding
            improved[:] = [value, now]
        if race is not None and race.branching and now - max(improved[1], race.joined) > _PATIENCE:
            event.interrupt()
            return
        if race is not None:
            race.best = min(race.best, value)
            low = max(low, race.bound)
            if race.stop:
                event.interrupt()
                return
        if value <= low + rel_gap * abs(low):
            event.interrupt()

    h.cbMipInterrupt += check
    if race is not None:  # the root node's work (strong branching, sub-MIPs) runs simplex without MIP callbacks

        def stop(event: highspy.highs.HighsCallbackEvent) -> None:
            if race.stop:
                event.interrupt()

        h.cbSimplexInterrupt += stop


class ColumnLP:
    """A linear program that grows by columns (column generation's master): HiGHS keeps the model and its
    basis between solves, so each round re-optimises from the last basis instead of starting over."""

    def __init__(self, row_lo: np.ndarray, row_hi: np.ndarray) -> None:
        self._h = highspy.Highs()  # type: ignore[no-untyped-call]  # highspy's Highs.__init__ is not annotated
        self._h.setOptionValue("output_flag", False)
        self._h.setOptionValue("threads", 1)
        self._h.setOptionValue("presolve", "off")  # presolve would discard the basis kept between solves
        self._h.setOptionValue("solver", "simplex")
        # Primal simplex for every re-solve, also after bounds change (the last basis is then primal infeasible):
        # branch-and-price's nodes, which start from their parent's basis with some of its columns fixed at 0, took
        # 54 / 77 iterations per solve against 67 / 99 with dual simplex, and 15.6 / 11.5 s in all against 18.7 /
        # 14.1 s (64-tier scale benchmark's large groups, seeds 3 / 4, searched from their best plans, one run each).
        self._h.setOptionValue("simplex_strategy", 4)
        self._zero = np.zeros(0, dtype=bool)  # per column: fixed at 0
        self._cost = np.zeros(0)  # per column: its cost
        self._dear = np.zeros(0, dtype=bool)  # per column: its cost raised by `allow_only`
        self.optimal = False  # whether the last solve ended proven optimal
        inf = highspy.kHighsInf
        self._h.addRows(
            len(row_lo),
            np.where(np.isinf(row_lo), -inf, row_lo).astype(float),
            np.where(np.isinf(row_hi), inf, row_hi).astype(float),
            0,
            np.array([], dtype=np.int32),
            np.array([], dtype=np.int32),
            np.array([], dtype=float),
        )

    def add(self, cost: np.ndarray, a: csc_array) -> None:
        """Append columns (0 <= x, no upper bound) with costs `cost` and entries `a` (rows x new columns)."""
        a = csc_array(a)
        n = a.shape[1]
        if n:
            self._h.addCols(
                n,
                cost.astype(float),
                np.zeros(n),
                np.full(n, highspy.kHighsInf),
                a.nnz,
                a.indptr[:-1].astype(np.int32),
                a.indices.astype(np.int32),
                a.data.astype(float),
            )
            self._zero = np.concatenate([self._zero, np.zeros(n, dtype=bool)])
            self._cost = np.concatenate([self._cost, cost.astype(float)])
            self._dear = np.concatenate([self._dear, np.zeros(n, dtype=bool)])

    def add_rows(self, low: np.ndarray, high: np.ndarray, a: csr_array) -> None:
        """Append rows with bounds `low` <= a @ x <= `high` (`a`: new rows x every column so far). The next solve
        starts from the last basis with the new rows' slacks basic (HiGHS extends it)."""
        a = csr_array(a)
        if a.shape[0]:
            inf = highspy.kHighsInf
            self._h.addRows(
                a.shape[0],
                np.where(np.isinf(low), -inf, low).astype(float),
                np.where(np.isinf(high), inf, high).astype(float),
                a.nnz,
                a.indptr[:-1].astype(np.int32),
                a.indices.astype(np.int32),
                a.data.astype(float),
            )

    def forbid(self, columns: list[int]) -> None:
        """Fix these columns at 0."""
        if columns:
            idx = np.array(columns, dtype=np.int32)
            zero = np.zeros(len(idx))
            self._h.changeColsBounds(len(idx), idx, zero, zero)
            self._zero[idx] = True

    def row_bounds(self, first: int, low: list[float], high: list[float]) -> None:
        """Set the bounds of rows first, first + 1, ... (infinite bounds allowed)."""
        if low:
            inf = highspy.kHighsInf
            idx = np.arange(first, first + len(low), dtype=np.int32)
            lo = np.where(np.isinf(low), -inf, low).astype(float)
            hi = np.where(np.isinf(high), inf, high).astype(float)
            # in highspy 1.15's module, not in its type stub
            self._h.changeRowsBounds(len(idx), idx, lo, hi)  # type: ignore[attr-defined]

    def allow_only(self, allowed: np.ndarray, penalty: float) -> None:
        """Make the columns where `allowed` is False cost `penalty` more, give the others their own cost back, and
        free every column `forbid` fixed; only the columns whose cost or bounds change are passed to HiGHS. Unlike
        a bound at 0, a cost leaves the last basis primal feasible, so the next solve (primal simplex) starts from
        a feasible point; a solution can still use such a column where it saves more than the penalty (`forbid`
        it then)."""
        fixed = np.flatnonzero(self._zero).astype(np.int32)
        if len(fixed):
            self._h.changeColsBounds(len(fixed), fixed, np.zeros(len(fixed)), np.full(len(fixed), highspy.kHighsInf))
            self._zero[fixed] = False
        idx = np.flatnonzero(allowed == self._dear).astype(np.int32)
        if len(idx):
            cost = np.where(allowed[idx], self._cost[idx], self._cost[idx] + penalty)
            self._h.changeColsCost(len(idx), idx, cost)
            self._dear[idx] = ~allowed[idx]

    def basis(self) -> highspy.HighsBasis:
        """The last solve's basis, to start a later solve from (`restore`)."""
        return self._h.getBasis()

    def restore(self, basis: highspy.HighsBasis) -> None:
        """Start the next solve from `basis`, taken when the LP had at most its rows and columns (the columns
        added since are nonbasic at 0, the rows added since have their slacks basic)."""
        more = self._h.getNumCol() - len(basis.col_status)
        if more:
            basis.col_status = [*basis.col_status, *[highspy.HighsBasisStatus.kLower] * more]
        rows = self._h.getNumRow() - len(basis.row_status)
        if rows:
            basis.row_status = [*basis.row_status, *[highspy.HighsBasisStatus.kBasic] * rows]
        self._h.setBasis(basis)

    def solve(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(value, column values, row duals); a row's dual is >= 0 when its lower bound binds. `optimal` says
        whether HiGHS proved them optimal; when it did not (infeasible, or stopped), it is tried once more from
        a fresh start, and the values are whatever it ended with."""
        self._h.run()
        if self._h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            self._h.clearSolver()  # drop the basis, in case it was the trouble
            self._h.run()
        self.optimal = self._h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        sol = self._h.getSolution()
        return (float(self._h.getInfo().objective_function_value), np.asarray(sol.col_value), np.asarray(sol.row_dual))
