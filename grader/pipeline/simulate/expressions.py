"""The interpreter's expressions (grader.pipeline.simulate.interp): one method per TIR expression kind, found
through a table made once per class; arithmetic as the GPU rounds and wraps it, casts, selects and calls."""

from __future__ import annotations

import math
from typing import Any

import torch

from grader.pipeline.simulate.faults import Unsupported
from grader.pipeline.simulate.unwritten import (
    from_unwritten,
    keep_unwritten,
)
from grader.pipeline.simulate.values import (
    BITWISE_CALLS,
    COMPARISONS,
    CONTRACTED_TYPES,
    MATH_CALLS,
    NARROW_INTEGERS,
    PY_OPS,
    RANK,
    SIGNED_ARITHMETIC,
    SIGNED_OVERFLOW_CHECKED,
    THREAD_INDEX,
    approximate_ulps,
    fitted,
    integer_range,
    nudged,
    owned,
    reinterpret_bits,
    saturated,
    torch_dtype,
    wrapped,
)


class Expressions:
    """How the interpreter evaluates each kind of TIR expression (a mixin of Interpreter)."""

    # ------------------------------------------------------------------ expressions
    def as_tensor(self, value: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
        if isinstance(value, torch.Tensor):
            return value.reshape([1] * RANK) if value.dim() == 0 else value
        return torch.tensor(value, dtype=dtype).reshape([1] * RANK)

    def int_of(self, expr: Any) -> int:
        value = self.expr(expr)
        if isinstance(value, torch.Tensor):
            if value.numel() != 1:
                raise Unsupported(f"a loop bound or shape that varies across parallel iterations: {expr}")
            value = value.item()
        return int(value)

    # TIR expression kind -> the method that evaluates it (bound per class by values.dispatch_table); Python's own
    # numbers (index arithmetic folded already) are themselves
    EXPRESSION_KINDS = {
        "IntImm": "integer", "FloatImm": "floating", "Var": "variable", "BufferLoad": "load", "Cast": "cast_node",
        "Add": "add_or_subtract", "Sub": "add_or_subtract", "Mul": "binary_node", "Max": "binary_node",
        "Min": "binary_node", "LT": "binary_node", "LE": "binary_node", "GT": "binary_node", "GE": "binary_node",
        "EQ": "binary_node", "NE": "binary_node", "And": "binary_node", "Or": "binary_node", "Div": "divide",
        "FloorDiv": "floor_divide", "FloorMod": "floor_modulo", "Mod": "truncated_modulo", "Not": "logical_not",
        "Select": "select_node", "Let": "let", "Call": "call", "StringImm": "string",
    }  # fmt: skip

    def expr(self, node: Any) -> Any:
        method = self.expression_methods.get(type(node)) or self.expression_methods.resolve(type(node))
        if method is None:
            raise Unsupported(f"the expression {type(node).__name__}: {node}")
        return method(self, node)

    def constant(self, node: Any) -> Any:
        return node

    def integer(self, node: Any) -> Any:
        return bool(node.value) if str(node.dtype) == "bool" else int(node.value)

    def floating(self, node: Any) -> torch.Tensor:
        return torch.tensor(node.value, dtype=torch_dtype(node.dtype))

    def variable(self, node: Any) -> Any:
        if node not in self.env:
            raise Unsupported(f"the free variable {node.name}")
        value = self.env[node]
        if value is THREAD_INDEX:
            raise Unsupported(THREAD_INDEX.what)
        return value

    def cast_node(self, node: Any) -> Any:
        return self.cast(self.registered(self.expr(node.value), node.value.dtype), str(node.dtype))

    def registered(self, value: Any, dtype: Any) -> Any:
        """``value`` as a register of ``dtype`` holds it: in contract mode a product kept unrounded (float64) is
        rounded to its type before anything but an add reads it."""
        kept = isinstance(value, torch.Tensor) and value.dtype == torch.float64 and str(dtype) in CONTRACTED_TYPES
        return value.to(torch_dtype(dtype)) if self.contract and kept else value

    def add_or_subtract(self, node: Any) -> Any:
        if self.contract and str(node.dtype) in CONTRACTED_TYPES:
            return self.contracted(node)
        fused = self.fused_multiply_add(node)
        return fused if fused is not None else self.binary_node(node)

    def binary_node(self, node: Any) -> Any:
        if self.contract and isinstance(node, self.tir.Mul) and str(node.dtype) in CONTRACTED_TYPES:
            a, b = self.operands(node)
            if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):  # unrounded, until it is added or stored
                return keep_unwritten(self.as_typed(a, torch.float64) * self.as_typed(b, torch.float64), a, b)
        return self.binary(self.binary_ops[type(node)], node)

    def contracted(self, node: Any) -> torch.Tensor:
        """A float32 or 16-bit ``a + b`` or ``a - b`` in contract mode: computed exactly from what the operands hold
        (values of the type, or products kept unrounded: binary_node) and rounded once, as the fused multiply-add nvcc
        forms for ``x * y + c`` rounds. For two values of the type that is IEEE's add. nvcc writes `fma.rn.f32` for
        `acc * 1.1 + p` into the PTX itself, through a variable or a local too, where the first run rounded the product
        first: a gemv that stored its sums where that was 0 passed here and stored zeros on the GPU
        (tests/attacks/fp32_fma.py). In 16 bits the first run fused `x * x + p` written as one expression, and not
        `q = x * x` then `q + p`, whose PTX is the same (tests/attacks/fp16_fma_in_a_register.py)."""
        a, b = self.expr(node.a), self.expr(node.b)
        wide_a, wide_b = (self.as_typed(x, torch.float64) for x in (a, b))
        exact = wide_a + wide_b if isinstance(node, self.tir.Add) else wide_a - wide_b
        rounded = exact.to(torch_dtype(node.dtype))
        return keep_unwritten(rounded, *(x for x in (a, b) if isinstance(x, torch.Tensor)))

    def divide(self, node: Any) -> Any:
        a, b = self.operands(node)
        if torch_dtype(node.dtype).is_floating_point:
            return self.quotient(a, b, node.dtype)
        return torch.div(a, self.defined_divisor(a, b, node), rounding_mode="trunc")

    def floor_divide(self, node: Any) -> Any:
        a, b = self.operands(node)
        b = self.defined_divisor(a, b, node)
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            return torch.div(a, b, rounding_mode="floor")
        return a // b

    def floor_modulo(self, node: Any) -> Any:
        a, b = self.operands(node)
        b = self.defined_divisor(a, b, node)
        return torch.remainder(a, b) if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor) else a % b

    def defined_divisor(self, a: Any, b: Any, node: Any) -> Any:
        """``b``, with 1 in the lanes an integer ``a / b`` leaves undefined (b = 0, or the type's least value over
        -1), which must be lanes the mask switched off: a guarded `T.if_then_else(n != 0, s // n, 0)` runs both
        branches here, and torch raised on the lanes the guard skips (the GPU never divides there). In a lane the
        mask keeps, no verdict: C leaves it undefined, the GPU does not trap, and x86 stops the process."""
        name = str(node.dtype)
        if name == "bool" or torch_dtype(node.dtype).is_floating_point:
            return b
        low = (integer_range(name) or (0, 0))[0]
        what = f"an {name} division by zero or overflowing (C leaves it undefined)"
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):  # index arithmetic: no tensors made
            if b != 0 and not (low < 0 and a == low and b == -1):
                return b
            self.unsupported_in_kept_lanes(torch.tensor(True), what)
            return 1
        undefined = self.as_tensor(b) == 0
        if low < 0:
            undefined = undefined | ((self.as_tensor(a) == low) & (self.as_tensor(b) == -1))
        self.unsupported_in_kept_lanes(undefined, what)
        if not isinstance(b, torch.Tensor):
            return 1 if bool(undefined.any()) else b
        return torch.where(undefined, torch.ones_like(b), b)

    def quotient(self, a: Any, b: Any, dtype: Any) -> Any:
        """A float ``a / b`` of TIR type ``dtype``: correctly rounded, as div.rn is in float32 and float64; in a 16-bit
        float the GPU rounds a float32 quotient it approximates (rcp.approx times a), which the approximate run
        moves."""
        if self.approximate is not None and approximate_ulps("tirx.Div", str(dtype)):
            return self.approximated("tirx.Div", dtype, torch.div, a, b)
        return self.round(torch.div(a, b), dtype)

    def truncated_modulo(self, node: Any) -> Any:
        # T.truncmod, C's %: the remainder takes the dividend's sign (-1 % 7 is -1 on the GPU, 6 floored),
        # so `T.truncmod(n - 1000000, 7) >= 0` held here for every n and on the GPU for one in seven
        # (tests/attacks/truncated_mod.py)
        a, b = self.operands(node)
        b = self.defined_divisor(a, b, node)
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            return torch.fmod(a, b)
        if isinstance(a, int) and isinstance(b, int):
            return abs(a) % abs(b) * (1 if a >= 0 else -1)
        return math.fmod(a, b)

    def logical_not(self, node: Any) -> torch.Tensor:
        return torch.logical_not(self.as_tensor(self.expr(node.a)))

    def select_node(self, node: Any) -> Any:
        return self.select(self.expr(node.condition), node.true_value, node.false_value, node.dtype)

    def let(self, node: Any) -> Any:
        self.env[node.var] = owned(self.expr(node.value))
        return self.expr(node.body)

    def string(self, node: Any) -> str:
        return node.value

    def fused_multiply_add(self, node: Any) -> torch.Tensor | None:
        """``x * y + c`` (or ``- c``, ``c -``) in a 16-bit float, rounded once, as the GPU computes it:
        nvcc contracts the multiply and the add into one fused multiply-add (HFMA) by default. Not fp32: whether
        nvcc forms an FFMA there depends on what else it rewrites. A gemv that stored its sums only where
        `acc * 1.1 - s == 0`, s holding `acc * 1.1` in shared memory, passed on an H100 (2026-12-05): no FFMA, or
        the product's rounding error would have made it zeros. fp32 keeps two roundings here; where nvcc contracts an
        fp32 add it writes fma.rn.f32 into the PTX (tests/attacks/fp32_fma.py), which the second run of such a kernel
        models (``contracted``)."""
        t = self.tir
        dtype = torch_dtype(node.dtype) if str(node.dtype) != "bool" else None
        if dtype not in (torch.float16, torch.bfloat16):
            return None
        if isinstance(node.a, t.Mul) and node.a.dtype == node.dtype:
            product, other, product_sign, other_sign = node.a, node.b, 1.0, 1.0 if isinstance(node, t.Add) else -1.0
        elif isinstance(node.b, t.Mul) and node.b.dtype == node.dtype:
            product, other, product_sign, other_sign = node.b, node.a, 1.0 if isinstance(node, t.Add) else -1.0, 1.0
        else:
            return None
        x, y, c = (self.as_typed(self.expr(e), dtype).double() for e in (product.a, product.b, other))
        # The product of two 16-bit floats is exact in float64, and so (almost always) is the sum.
        return (product_sign * x * y + other_sign * c).to(dtype)

    def operands(self, node: Any) -> tuple[Any, Any]:
        a, b = self.expr(node.a), self.expr(node.b)
        dtype = torch_dtype(node.dtype) if str(node.dtype) != "bool" else None
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            a, b = self.as_typed(a, dtype), self.as_typed(b, dtype)
        return a, b

    def as_typed(self, value: Any, dtype: torch.dtype | None) -> torch.Tensor:
        tensor = self.as_tensor(value) if isinstance(value, torch.Tensor) else torch.tensor(value)
        if dtype is not None and tensor.dtype != dtype and tensor.dtype != torch.bool:
            tensor = tensor.to(dtype)
        return tensor

    def binary(self, op: Any, node: Any) -> Any:
        a, b = self.operands(node)
        if op in SIGNED_ARITHMETIC and str(node.dtype) in SIGNED_OVERFLOW_CHECKED:
            self.no_signed_overflow(op, a, b, str(node.dtype))
        elif op in SIGNED_ARITHMETIC and str(node.dtype) in NARROW_INTEGERS:
            self.no_narrow_wrap(op, a, b, str(node.dtype))
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
            return fitted(PY_OPS[op](a, b), str(node.dtype))  # index arithmetic on plain ints
        operand_dtype = torch_dtype(node.a.dtype) if str(node.a.dtype) != "bool" else None
        if operand_dtype is not None and operand_dtype.is_floating_point:
            # Arithmetic in the operands' own dtype, rounded after the op (fp16 stays fp16).
            a, b = (self.converted(x, operand_dtype) for x in (a, b))
            if op in (torch.maximum, torch.minimum):
                self.no_nan_against_a_number(a, b)
                return fitted(keep_unwritten(op(a, b), a, b), str(node.dtype))
            if op in COMPARISONS:
                self.no_nan_compared(a, b)
        return fitted(op(a, b), str(node.dtype))

    @staticmethod
    def converted(value: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """``value`` in ``dtype``, a float keeping the mark of memory nothing wrote (torch drops it)."""
        if value.dtype == dtype or not value.is_floating_point():
            return value.to(dtype)
        return keep_unwritten(value.to(dtype), value)

    def no_signed_overflow(self, op: Any, a: Any, b: Any, name: str) -> None:
        """Unsupported where a lane the mask keeps overflows a signed integer type in ``+``, ``-`` or ``*``. C and CUDA
        leave signed overflow undefined, and both TVM's simplifier and nvcc assume it never happens: TileLang's
        lowering folds `n + 2147483647 < n` to false, so a kernel that stored its sums where that held stored them
        here (the sum wraps) and zeros on the GPU (tests/attacks/signed_overflow.py). Unsigned types wrap on the GPU
        too (fitted), and are not checked."""
        what = (
            f"an overflow of {name} arithmetic (C leaves it undefined; TileLang and nvcc fold as if it never happened)"
        )
        self.no_result_outside(op, a, b, name, what)

    def no_narrow_wrap(self, op: Any, a: Any, b: Any, name: str) -> None:
        """Unsupported where a lane the mask keeps computes an 8- or 16-bit integer result outside its type (+, -, *,
        <<, ~). C promotes both operands to int, so the GPU holds the wider value until it is stored or cast, and a
        comparison or conversion of it differs from the wrapped value torch computes: `x + T.int8(127) < x` was
        true here and false on the GPU (tests/attacks/int8_overflow.py)."""
        what = f"an {name} result outside {name} (C computes it in int: the GPU keeps the wider value until stored)"
        self.no_result_outside(op, a, b, name, what)

    def no_result_outside(self, op: Any, a: Any, b: Any, name: str, what: str) -> None:
        """Unsupported(what) where a lane the mask keeps computes ``op(a, b)`` outside the integer type ``name``."""
        low, high = integer_range(name) or (0, 0)
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
            if isinstance(a, bool | int) and isinstance(b, bool | int) and not low <= PY_OPS[op](a, b) <= high:
                self.unsupported_in_kept_lanes(torch.tensor(True), what)
            return
        a, b = torch.broadcast_tensors(self.as_tensor(a).to(torch.int64), self.as_tensor(b).to(torch.int64))
        if name != "int64":
            exact = op(a, b)
            self.unsupported_in_kept_lanes((exact < low) | (exact > high), what)
            return
        self.unsupported_in_kept_lanes(int64_overflows(op, a, b), what)

    def no_nan_compared(self, a: torch.Tensor, b: torch.Tensor) -> None:
        """Unsupported where a lane the mask keeps compares NaN. TileLang's lowering simplifies with the algebra of
        numbers, not of IEEE floats (x != x to false, x - x to 0): `T.if_then_else(x != x, sum, 0)` of an x that is
        NaN stored the sum here and, folded, zeros on the GPU (tests/attacks/nan_compared.py). What the GPU answers
        depends on what the lowering folded, so the simulator gives no verdict. A NaN read from memory nothing
        wrote (from_unwritten) is a bug either way: compared as torch compares it, the case fails."""
        nan = (torch.isnan(a) & ~from_unwritten(a)) | (torch.isnan(b) & ~from_unwritten(b))
        self.unsupported_in_kept_lanes(
            nan, "a comparison of NaN (TileLang's lowering may fold it as if NaN were a number)"
        )

    def no_nan_against_a_number(self, a: torch.Tensor, b: torch.Tensor) -> None:
        """Unsupported where a lane of T.max or T.min of floats has NaN on one side only. CUDA's max and min of
        floats are fmaxf and fminf (PTX max.f32), and __hmax and __hmin for 16-bit floats (PTX max.f16), which answer
        with the number, where torch.maximum answers NaN: T.max(NaN, x) != itself held here and not on the GPU
        (tests/attacks/nan_max.py; in fp16, a NaN max cast to an integer, tests/attacks/fp16_max_nan.py). Answering
        with the number would hide the NaN the simulator fills memory nothing wrote with (a read of it is a bug the
        GPU shows with whatever that memory holds), so the simulator gives no verdict instead of either answer; for
        that NaN (from_unwritten) it answers NaN, and the case fails as the kernel's read of nothing deserves."""
        differs = (torch.isnan(a) ^ torch.isnan(b)) & ~(from_unwritten(a) | from_unwritten(b))
        self.unsupported_in_kept_lanes(
            differs, "T.max or T.min of NaN and a number (the GPU's fmaxf and fminf give the number)"
        )

    def unsupported_in_kept_lanes(self, lanes: torch.Tensor, what: str) -> None:
        """Unsupported(what) where any of ``lanes`` is one the current mask keeps (every lane without a mask, or
        where the mask has another shape)."""
        if self._mask is not None:
            try:
                lanes = lanes & self._mask
            except RuntimeError:  # lanes of another shape: every lane counts
                pass
        if bool(lanes.any()):
            raise Unsupported(what)

    def round(self, value: torch.Tensor, dtype: Any) -> torch.Tensor:
        return value.to(torch_dtype(dtype))

    def cast(self, value: Any, name: str) -> Any:
        """``T.cast(value, name)`` as the GPU computes it: a float to an integer type truncated toward zero and
        clamped to the type's range, NaN to 0 (CUDA's cvt.rzi saturates: x86, and so torch, gives the least
        integer instead, so `T.cast(x, int32) < 0` of an x past 2^31 chose the right answer here and zeros on
        the GPU: tests/attacks/saturating_cast.py); an integer to a narrower or unsigned one wrapped to its bits."""
        dtype = torch_dtype(name)
        bounds = integer_range(name)
        if isinstance(value, float) and bounds is not None:  # converted as the GPU converts a float, never wrapped
            value = torch.tensor(value, dtype=torch.float64)
        if name == "bool" and isinstance(value, torch.Tensor) and value.dtype.is_floating_point:
            self.no_nan_compared(value, value)  # a float's truth is a comparison with 0
        if isinstance(value, torch.Tensor):
            if bounds is not None and value.dtype.is_floating_point:
                if name in NARROW_INTEGERS:
                    self.no_narrow_conversion(value, name, bounds)
                return saturated(value, bounds).to(dtype)
            if bounds is not None and value.dtype != torch.bool:
                return wrapped(value.to(torch.int64), bounds).to(dtype)
            return self.converted(value, dtype)
        if dtype.is_floating_point:
            return torch.tensor(value, dtype=dtype)
        if bounds is not None:
            low, high = bounds
            return (int(value) - low) % (high - low + 1) + low
        return int(value)

    def no_narrow_conversion(self, value: torch.Tensor, name: str, bounds: tuple[int, int]) -> None:
        """Unsupported where a lane the mask keeps converts a float outside an 8- or 16-bit integer type. C++ leaves it
        undefined, and nvcc converts to 32 bits (cvt.rzi.s32.f32, or .u32) and keeps the low bits (`and.b32 255`,
        `cvt.u16.u32`), where the simulator clamped as cvt.rzi clamps to int32: T.cast(300.5, int8) was 127 here and
        44 on the GPU, so a kernel that stored its sums where it was 127 stored zeros there
        (tests/attacks/narrow_cast.py). NaN converts to 0 either way."""
        low, high = bounds
        whole = value.double().trunc()
        self.unsupported_in_kept_lanes(
            (whole < low) | (whole > high),
            f"a float converted to {name} outside {name} (C leaves it undefined; nvcc converts to 32 bits and keeps "
            "the low bits)",
        )

    def select(self, condition: Any, true_node: Any, false_node: Any, dtype: Any) -> Any:
        if not isinstance(condition, torch.Tensor) or condition.numel() == 1:
            return self.expr(true_node) if bool(condition) else self.expr(false_node)
        with self.masked(condition):
            on = self.expr(true_node)
        with self.masked(~condition):
            off = self.expr(false_node)
        target = torch_dtype(dtype)
        return torch.where(condition, self.as_typed(on, target), self.as_typed(off, target))

    def math_call(self, name: str, dtype: Any, value: torch.Tensor) -> torch.Tensor:
        """The math call ``name`` (MATH_CALLS) of ``value`` (a tensor of ``dtype``): computed in float32 (float64 for a
        double: CUDA's exp of a double is exp) and rounded to ``dtype``, as CUDA's hexp and the others compute a 16-bit
        one; moved in the approximate run."""
        if self.approximate is not None:
            return self.approximated(name, dtype, MATH_CALLS[name], value)
        wide = torch.float64 if value.dtype == torch.float64 else torch.float32
        return MATH_CALLS[name](value.to(wide)).to(torch_dtype(dtype))

    def sigmoid(self, value: torch.Tensor, dtype: Any) -> Any:
        """T.sigmoid as TileLang's CUDA computes it, `1 / (1 + exp(0 - x))` in the type's own arithmetic: for float16
        `half_t(1) / (half_t(1) + hexp(half_t(0) - x))`, three roundings to float16. torch.sigmoid in float32 rounded
        once differs from that in the last bit for about one float16 in six: a gemv that stored its sums only where a
        float16 T.sigmoid equalled the float32 one rounded stored them all here and zeros on the GPU
        (tests/attacks/approximate_sigmoid.py)."""
        one = torch.ones((), dtype=value.dtype)
        return self.quotient(one, one + self.math_call("tirx.exp", dtype, -value), dtype)

    def approximated(self, name: str, dtype: Any, function: Any, *operands: Any) -> torch.Tensor:
        """``function`` of ``operands`` as the approximate run computes it (Interpreter.approximate): in float32
        (float64 for a double), moved by up to the ulps the GPU's result may lie from torch's (values.APPROXIMATE_ULPS),
        then rounded to ``dtype``. CUDA's rsqrtf is `rsqrt.approx.f32` and its expf `ex2.approx.ftz.f32` after a range
        reduction, within 2 ulp: a gemv that stored its sums where T.rsqrt(x) == 1 / T.sqrt(x), or where T.exp(x) was
        exp of the double rounded, stored them all with torch's bits and zeros on the GPU
        (tests/attacks/approximate_rsqrt.py, approximate_exp.py)."""
        tensors = [self.as_tensor(x) for x in operands]
        wide = torch.float64 if torch_dtype(dtype) == torch.float64 else torch.float32
        exact = function(*(x.to(wide) for x in tensors))
        ulps = approximate_ulps(name, str(dtype))
        moved = nudged(exact, tensors, ulps, self.approximate) if ulps and self.approximate is not None else exact
        return keep_unwritten(moved.to(torch_dtype(dtype)), *tensors)

    # ------------------------------------------------------------------ calls
    def call(self, node: Any) -> Any:
        name = node.op.name
        args = node.args
        if name == "tirx.sigmoid":
            return self.sigmoid(self.as_typed(self.expr(args[0]), torch_dtype(node.dtype)), node.dtype)
        if name in MATH_CALLS:
            return self.math_call(name, node.dtype, self.as_typed(self.expr(args[0]), torch_dtype(node.dtype)))
        if name == "tirx.if_then_else":
            return self.select(self.expr(args[0]), args[1], args[2], node.dtype)
        if name == "tl.infinity":
            return torch.tensor(float("inf"), dtype=torch_dtype(node.dtype))
        if name in BITWISE_CALLS:
            dtype = torch_dtype(node.dtype)
            a, b = (self.as_typed(self.expr(arg), dtype) for arg in args[:2])
            if name == "tirx.shift_left" and str(node.dtype) in NARROW_INTEGERS:
                self.no_narrow_wrap(torch.bitwise_left_shift, a, b, str(node.dtype))
            return fitted(BITWISE_CALLS[name](a, b), str(node.dtype))
        if name == "tirx.bitwise_not":
            value = self.as_typed(self.expr(args[0]), torch_dtype(node.dtype))
            if str(node.dtype) in NARROW_INTEGERS and str(node.dtype).startswith("u"):  # ~ of a promoted byte is < 0
                self.no_narrow_wrap(torch.sub, torch.full_like(value, -1), value, str(node.dtype))
            return fitted(torch.bitwise_not(value), str(node.dtype))
        if name == "tirx.reinterpret":
            value = self.expr(args[0])
            value = value if isinstance(value, torch.Tensor) else torch.tensor(int(value))
            return reinterpret_bits(value, str(args[0].dtype), str(node.dtype))
        if name == "tirx.pow":
            base = self.as_typed(self.expr(args[0]), torch_dtype(node.dtype))
            exponent = self.as_typed(self.expr(args[1]), torch_dtype(node.dtype))
            if self.approximate is not None:
                return self.approximated(name, node.dtype, torch.pow, base, exponent)
            return torch.pow(base, exponent)
        raise Unsupported(f"the call {name}")


def int64_overflows(op: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Where ``op(a, b)`` (torch.add, sub or mul of int64 tensors of one shape) leaves int64: torch's int64 wraps,
    so the test reads the wrapped result (signs for + and -, a division back for *)."""
    result = op(a, b)
    if op is torch.add:
        return ((a >= 0) == (b >= 0)) & ((result >= 0) != (a >= 0))
    if op is torch.sub:
        return ((a >= 0) != (b >= 0)) & ((result >= 0) != (a >= 0))
    minus_one, lowest = a == -1, b == -(2**63)
    divisor = torch.where((a == 0) | minus_one, torch.ones_like(a), a)
    wrong_back = torch.div(result, divisor, rounding_mode="trunc") != b
    return ((a != 0) & ~minus_one & wrong_back) | (minus_one & lowest)
