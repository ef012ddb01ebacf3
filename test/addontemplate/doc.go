// Package addontemplate tests template add-ons (internal/hub/addontemplate) with the hub, real
// API servers and spokes joined by running registration and work agents: a template's agent
// reaches the spoke through ManifestWork and reports Available, bad templates end in conditions
// naming the field, and what the hub made goes with the add-on.
package addontemplate
