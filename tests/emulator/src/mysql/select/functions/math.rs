//! Doris's math functions whose domain DataFusion answers differently: outside it Doris
//! returns NULL (`sqrt(-1)`, `ln(0)`, `acos(1.1)`, `fmod(x, 0)`), where DataFusion returns
//! NaN or infinity. Each rule is checked by a case of `tests/emulator/corpus/function_math.txt`
//! (Doris's own `.out` results).

use super::row_fn::{Kind, Out, RowFn, Value};

const FLOAT: &[Kind] = &[Kind::Float];
const FLOAT_FLOAT: &[Kind] = &[Kind::Float, Kind::Float];

/// The math functions the emulator defines.
pub fn all() -> Vec<RowFn> {
    vec![
        RowFn::new("sqrt", &[1], FLOAT, Out::Double, sqrt).aliases(&["dsqrt"]),
        RowFn::new("ln", &[1], FLOAT, Out::Double, ln).aliases(&["dlog1"]),
        RowFn::new("log10", &[1], FLOAT, Out::Double, log10).aliases(&["dlog10"]),
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
    }
}
