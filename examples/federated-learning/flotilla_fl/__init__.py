"""Flotilla's federated-learning example: a numpy softmax model trained with Flower's FedAvg.

Modules: model (the model and its gradient descent), data (synthetic label-skewed data per
cluster), aggregation (FedAvg in numpy), settings (env/config lookup), progress (the per-round
FLOTILLA_PROGRESS line), client_app / server_app (the Flower apps), compare (federated model vs.
each cluster trained alone).
"""
