// Package deliverytest holds the test fixture every hub controller that creates objects in a
// cluster's namespace uses to show it skips the clusters package delivery refuses.
package deliverytest
