// Package policytemplate resolves the Go templates of OCM's governance policies, for the hub and
// for the clusters alike: hub templates (`{{hub ... hub}}`), which the hub's policy propagator
// resolves for each cluster before it writes the cluster's copy, and cluster templates
// (`{{ ... }}`), which the config-policy-controller add-on resolves on the cluster before it
// evaluates an object template.
//
// A template is resolved as OCM resolves it: the object definition (JSON) is written as YAML,
// quotes around a template that ends in toInt, toBool or toLiteral are dropped so that its value
// keeps its type, autoindent becomes indent of the template's column, the text is executed with
// text/template and the function set below, and the YAML is read back.
//
// Functions: fromSecret, fromConfigMap, fromClusterClaim, lookupClusterClaim, lookup (a missing
// object is an empty map), copyConfigMapData, copySecretData, base64enc, base64dec, indent,
// autoindent, atoi, toInt, toBool, toLiteral, fromJSON, toJSON, fromYAML, toYAML and Sprig's
// functions less those that read the process's environment, the network, the clock or
// randomness. Reads go through a Source; Options.Namespace confines them to one namespace (the
// hub's rule: a hub template reads only its policy's namespace, and the ManagedCluster of the
// copy's cluster).
package policytemplate
