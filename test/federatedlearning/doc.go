// Package federatedlearning tests the hub's FederatedLearning controller against a real API
// server: OCM's objects and phases for Flower and OpenFL, clients only on clusters that report the
// data claim, a client cluster lost and replaced, bad specs, objects it did not make left alone,
// and clean-up, which leaves a spoke's own namespace and what it holds (one spoke with a real
// work agent).
package federatedlearning
