//! Doris's math functions whose domain DataFusion answers differently: outside it Doris
//! returns NULL (`sqrt(-1)`, `ln(0)`, `acos(1.1)`, `fmod(x, 0)`), where DataFusion returns
//! NaN or infinity. Each rule is checked by a case of `tests/emulator/corpus/function_math.txt`
//! (Doris's own `.out` results), except `log2` and `log(b, x)`, whose rules are read from
//! Doris's BE source (`log2` is the same `FunctionMathLog` template as `ln` and `log10`;
//! `log`'s `LogImpl` answers NULL for a base ≤ 0 or within 1e-9 of 1, and for x ≤ 0).

use super::row_fn::{Kind, Out, RowFn, Value};

const FLOAT: &[Kind] = &[Kind::Float];
const FLOAT_FLOAT: &[Kind] = &[Kind::Float, Kind::Float];

/// The math functions the emulator defines.
pub fn all() -> Vec<RowFn> {
    vec![
        RowFn::new("sqrt", &[1], FLOAT, Out::Double, sqrt).aliases(&["dsqrt"]),
        RowFn::new("ln", &[1], FLOAT, Out::Double, ln).aliases(&["dlog1"]),
        RowFn::new("log10", &[1], FLOAT, Out::Double, log10).aliases(&["dlog10"]),
        RowFn::new("log2", &[1], FLOAT, Out::Double, log2),
        RowFn::new("log", &[2], FLOAT_FLOAT, Out::Double, log),
        RowFn::new("acos", &[1], FLOAT, Out::Double, acos),
        RowFn::new("asin", &[1], FLOAT, Out::Double, asin),
        RowFn::new("acosh", &[1], FLOAT, Out::Double, acosh),
        RowFn::new("atanh", &[1], FLOAT, Out::Double, atanh),
        RowFn::new("fmod", &[2], FLOAT_FLOAT, Out::Double, fmod),
    ]
}

/// `f(x)` where `inside(x)` holds, NULL elsewhere (and for a NULL or NaN argument).
fn within(args: &[Value], inside: fn(f64) -> bool, f: fn(f64) -> f64) -> Result<Value, String> {
    Ok(match args.first().and_then(Value::float) {
        Some(x) if inside(x) => Value::Float(f(x)),
        _ => Value::Null,
    })
}

fn sqrt(args: &[Value]) -> Result<Value, String> {
    within(args, |x| x >= 0.0, f64::sqrt)
}

fn ln(args: &[Value]) -> Result<Value, String> {
    within(args, |x| x > 0.0, f64::ln)
}

fn log10(args: &[Value]) -> Result<Value, String> {
    within(args, |x| x > 0.0, f64::log10)
}

fn log2(args: &[Value]) -> Result<Value, String> {
    within(args, |x| x > 0.0, f64::log2)
}

/// `log(b, x)`: the logarithm of `x` to base `b`; NULL for `b ≤ 0`, `b` within 1e-9 of 1
/// and `x ≤ 0`.
fn log(args: &[Value]) -> Result<Value, String> {
    Ok(
        match (
            args.first().and_then(Value::float),
            args.get(1).and_then(Value::float),
        ) {
            (Some(b), Some(x)) if b > 0.0 && (b - 1.0).abs() >= 1e-9 && x > 0.0 => {
                Value::Float(x.ln() / b.ln())
            }
            _ => Value::Null,
        },
    )
}

fn acos(args: &[Value]) -> Result<Value, String> {
    within(args, |x| (-1.0..=1.0).contains(&x), f64::acos)
}

fn asin(args: &[Value]) -> Result<Value, String> {
    within(args, |x| (-1.0..=1.0).contains(&x), f64::asin)
}

fn acosh(args: &[Value]) -> Result<Value, String> {
    within(args, |x| x >= 1.0, libm::acosh)
}

fn atanh(args: &[Value]) -> Result<Value, String> {
    within(args, |x| x > -1.0 && x < 1.0, libm::atanh)
}

/// The remainder of `x / y` with the sign of `x`; NULL for `y = 0` (DataFusion: NaN).
fn fmod(args: &[Value]) -> Result<Value, String> {
    Ok(
        match (
            args.first().and_then(Value::float),
            args.get(1).and_then(Value::float),
        ) {
            (Some(x), Some(y)) if y != 0.0 => Value::Float(x % y),
            _ => Value::Null,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(f: fn(&[Value]) -> Result<Value, String>, x: f64) -> Value {
        f(&[Value::Float(x)]).unwrap()
    }

    #[test]
    fn outside_the_domain_is_null_not_nan() {
        for (f, x) in [
            (sqrt as fn(&[Value]) -> Result<Value, String>, -1.0),
            (ln, 0.0),
            (ln, -1.1),
            (log10, 0.0),
            (log10, -1.0),
            (log10, f64::NAN),
            (log2, 0.0),
            (log2, -8.0),
            (acos, 1.1),
            (asin, -1.1),
            (acosh, 0.0),
            (atanh, 1.0),
            (atanh, -1.0),
        ] {
            assert_eq!(one(f, x), Value::Null, "{x}");
        }
        assert_eq!(one(sqrt, 1.1), Value::Float(1.0488088481701516));
        assert_eq!(one(acosh, 1.1), Value::Float(0.4435682543851154));
        assert_eq!(one(acos, 0.0), Value::Float(std::f64::consts::FRAC_PI_2));
        let two = |x: f64, y: f64| fmod(&[Value::Float(x), Value::Float(y)]).unwrap();
        assert_eq!(two(10.1, 3.2), Value::Float(0.4999999999999991));
        assert_eq!(two(-7.0, 2.0), Value::Float(-1.0));
        assert_eq!(two(10.1, 0.0), Value::Null);
        assert_eq!(one(log2, 8.0), Value::Float(3.0));
        let log = |b: f64, x: f64| log(&[Value::Float(b), Value::Float(x)]).unwrap();
        assert_eq!(log(2.0, 8.0), Value::Float(3.0));
        for (b, x) in [
            (0.0, 8.0),
            (-2.0, 8.0),
            (1.0, 8.0),
            (1.0 + 1e-10, 8.0),
            (2.0, 0.0),
        ] {
            assert_eq!(log(b, x), Value::Null, "log({b}, {x})");
        }
    }
}
