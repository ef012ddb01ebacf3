"""Multinomial logistic regression (softmax) trained by plain numpy mini-batch gradient descent.

The model is a weight matrix W (features x classes) and a bias vector b (classes); it predicts
softmax(x @ W + b). Loss is the mean cross-entropy plus an optional L2 penalty on W.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Params:
    """Model parameters: weights (n_features, n_classes) and bias (n_classes,)."""

    weights: FloatArray
    bias: FloatArray

    @property
    def n_features(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.weights.shape[1])


@dataclass(frozen=True)
class Scores:
    """Mean cross-entropy loss and accuracy of a model on a data set."""

    loss: float
    accuracy: float


def init_params(n_features: int, n_classes: int) -> Params:
    """Return all-zero parameters: the same starting point for every run (predicts uniform)."""
    if n_features < 1 or n_classes < 2:
        raise ValueError(
            f"model needs n_features >= 1 and n_classes >= 2, got {n_features} and {n_classes}"
        )
    return Params(np.zeros((n_features, n_classes)), np.zeros(n_classes))


def to_arrays(params: Params) -> list[FloatArray]:
    """Flatten parameters into the list order [weights, bias] used on the wire."""
    return [params.weights, params.bias]


def from_arrays(arrays: list[NDArray[np.generic]]) -> Params:
    """Inverse of to_arrays; checks the shapes agree with each other."""
    if len(arrays) != 2:
        raise ValueError(f"expected 2 arrays [weights, bias], got {len(arrays)}")
    weights = np.asarray(arrays[0], dtype=np.float64)
    bias = np.asarray(arrays[1], dtype=np.float64)
    if weights.ndim != 2 or bias.shape != (weights.shape[1],):
        raise ValueError(
            f"weights must be (features, classes) and bias (classes,), got {weights.shape} "
            f"and {bias.shape}"
        )
    return Params(weights, bias)


def predict_proba(params: Params, x: FloatArray) -> FloatArray:
    """Class probabilities, one row per sample."""
    logits = x @ params.weights + params.bias
    logits = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(logits)
    probs: FloatArray = exp / exp.sum(axis=1, keepdims=True)
    return probs


def predict(params: Params, x: FloatArray) -> IntArray:
    """Most likely class per sample."""
    return np.asarray(np.argmax(predict_proba(params, x), axis=1), dtype=np.int64)


def _check(params: Params, x: FloatArray, y: IntArray) -> None:
    if x.ndim != 2 or x.shape[1] != params.n_features:
        raise ValueError(f"x must be (samples, {params.n_features}), got {x.shape}")
    if y.shape != (x.shape[0],):
        raise ValueError(f"y must be ({x.shape[0]},), got {y.shape}")
    if y.size and (y.min() < 0 or y.max() >= params.n_classes):
        raise ValueError(f"labels must be in [0, {params.n_classes}), got {y.min()}..{y.max()}")


def loss_and_grad(
    params: Params, x: FloatArray, y: IntArray, l2: float = 0.0
) -> tuple[float, Params]:
    """Mean cross-entropy (+ l2/2 * |W|^2) and its gradient with respect to W and b."""
    _check(params, x, y)
    n = x.shape[0]
    if n == 0:
        raise ValueError("cannot compute a loss on 0 samples")
    probs = predict_proba(params, x)
    picked = probs[np.arange(n), y]
    loss = float(-np.mean(np.log(np.clip(picked, 1e-12, 1.0))))
    loss += 0.5 * l2 * float(np.sum(params.weights**2))
    delta = probs.copy()
    delta[np.arange(n), y] -= 1.0
    delta /= n
    grad_w: FloatArray = x.T @ delta + l2 * params.weights
    grad_b: FloatArray = delta.sum(axis=0)
    return loss, Params(grad_w, grad_b)


def evaluate(params: Params, x: FloatArray, y: IntArray) -> Scores:
    """Loss (without the L2 term) and accuracy on (x, y)."""
    loss, _ = loss_and_grad(params, x, y)
    accuracy = float(np.mean(predict(params, x) == y))
    return Scores(loss=loss, accuracy=accuracy)


def train(  # pylint: disable=too-many-arguments
    params: Params,
    x: FloatArray,
    y: IntArray,
    *,
    epochs: int,
    learning_rate: float,
    batch_size: int,
    rng: np.random.Generator,
    l2: float = 1e-4,
) -> tuple[Params, Scores]:
    """Mini-batch gradient descent from params; returns new params and their scores on (x, y).

    Each epoch visits every sample once in an order drawn from rng, so a run is deterministic
    for a given rng state.
    """
    _check(params, x, y)
    if epochs < 1 or batch_size < 1 or learning_rate <= 0:
        raise ValueError(
            f"need epochs >= 1, batch_size >= 1 and learning_rate > 0, got {epochs}, "
            f"{batch_size} and {learning_rate}"
        )
    if x.shape[0] == 0:
        raise ValueError("cannot train on 0 samples")
    weights = params.weights.copy()
    bias = params.bias.copy()
    for _ in range(epochs):
        order = rng.permutation(x.shape[0])
        for start in range(0, x.shape[0], batch_size):
            idx = order[start : start + batch_size]
            _, grad = loss_and_grad(Params(weights, bias), x[idx], y[idx], l2)
            weights -= learning_rate * grad.weights
            bias -= learning_rate * grad.bias
    trained = Params(weights, bias)
    return trained, evaluate(trained, x, y)
