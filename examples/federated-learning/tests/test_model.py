"""Tests for the softmax model and its gradient descent."""

from __future__ import annotations

import numpy as np
import pytest

from flotilla_fl import model


def _blobs(seed: int, n: int = 300) -> tuple[model.FloatArray, model.IntArray]:
    rng = np.random.default_rng(seed)
    means = np.array([[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0]])
    y = rng.integers(0, 3, size=n).astype(np.int64)
    x = means[y] + rng.normal(0.0, 0.7, size=(n, 2))
    return x, y


def test_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(20, 4))
    y = rng.integers(0, 3, size=20).astype(np.int64)
    params = model.Params(rng.normal(size=(4, 3)), rng.normal(size=3))
    _, grad = model.loss_and_grad(params, x, y, l2=0.1)
    eps = 1e-6
    for i in range(4):
        for j in range(3):
            w_plus = params.weights.copy()
            w_plus[i, j] += eps
            w_minus = params.weights.copy()
            w_minus[i, j] -= eps
            up, _ = model.loss_and_grad(model.Params(w_plus, params.bias), x, y, l2=0.1)
            down, _ = model.loss_and_grad(model.Params(w_minus, params.bias), x, y, l2=0.1)
            assert grad.weights[i, j] == pytest.approx((up - down) / (2 * eps), abs=1e-6)
    for j in range(3):
        b_plus = params.bias.copy()
        b_plus[j] += eps
        b_minus = params.bias.copy()
        b_minus[j] -= eps
        up, _ = model.loss_and_grad(model.Params(params.weights, b_plus), x, y, l2=0.1)
        down, _ = model.loss_and_grad(model.Params(params.weights, b_minus), x, y, l2=0.1)
        assert grad.bias[j] == pytest.approx((up - down) / (2 * eps), abs=1e-6)


def test_zero_init_predicts_uniform() -> None:
    x, y = _blobs(0)
    params = model.init_params(2, 3)
    scores = model.evaluate(params, x, y)
    assert scores.loss == pytest.approx(np.log(3.0))
    assert np.allclose(model.predict_proba(params, x), 1.0 / 3.0)


def test_training_learns_separable_blobs() -> None:
    x, y = _blobs(0)
    before = model.evaluate(model.init_params(2, 3), x, y)
    trained, scores = model.train(model.init_params(2, 3), x, y, epochs=10,
                                  learning_rate=0.1, batch_size=16,
                                  rng=np.random.default_rng(0))
    assert scores.loss < before.loss / 4
    x_test, y_test = _blobs(1)
    assert model.evaluate(trained, x_test, y_test).accuracy > 0.97


def test_training_is_deterministic_for_a_seed() -> None:
    x, y = _blobs(0)

    def run(seed: int) -> model.Params:
        trained, _ = model.train(model.init_params(2, 3), x, y, epochs=2, learning_rate=0.1,
                                 batch_size=8, rng=np.random.default_rng(seed))
        return trained

    a, b, c = run(5), run(5), run(6)
    assert np.array_equal(a.weights, b.weights) and np.array_equal(a.bias, b.bias)
    assert not np.array_equal(a.weights, c.weights)


def test_training_does_not_modify_its_input() -> None:
    x, y = _blobs(0)
    params = model.init_params(2, 3)
    model.train(params, x, y, epochs=1, learning_rate=0.1, batch_size=8,
                rng=np.random.default_rng(0))
    assert not params.weights.any() and not params.bias.any()


def test_softmax_is_stable_for_large_logits() -> None:
    params = model.Params(np.array([[1000.0, -1000.0, 0.0]]), np.zeros(3))
    probs = model.predict_proba(params, np.array([[1.0], [-1.0]]))
    assert np.all(np.isfinite(probs))
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert list(model.predict(params, np.array([[1.0], [-1.0]]))) == [0, 1]


def test_arrays_round_trip() -> None:
    params = model.Params(np.arange(6.0).reshape(3, 2), np.array([0.5, -0.5]))
    back = model.from_arrays(list(model.to_arrays(params)))
    assert np.array_equal(back.weights, params.weights)
    assert np.array_equal(back.bias, params.bias)
    assert (back.n_features, back.n_classes) == (3, 2)


@pytest.mark.parametrize(
    "arrays, match",
    [
        ([np.zeros((3, 2))], "expected 2 arrays"),
        ([np.zeros((3, 2)), np.zeros(3)], "bias"),
        ([np.zeros(6), np.zeros(2)], "weights must be"),
    ],
)
def test_from_arrays_rejects_bad_shapes(arrays: list[model.FloatArray], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        model.from_arrays(list(arrays))


def test_rejects_out_of_range_labels_and_bad_settings() -> None:
    x, y = _blobs(0)
    params = model.init_params(2, 3)
    with pytest.raises(ValueError, match="labels"):
        model.evaluate(params, x, y + 3)
    with pytest.raises(ValueError, match="x must be"):
        model.evaluate(model.init_params(5, 3), x, y)
    with pytest.raises(ValueError, match="epochs"):
        model.train(params, x, y, epochs=0, learning_rate=0.1, batch_size=8,
                    rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_classes"):
        model.init_params(2, 1)
