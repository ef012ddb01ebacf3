// Package scheme registers every Flotilla API group, with client-go's built-in kinds, in one
// runtime.Scheme for clients and controllers.
package scheme
