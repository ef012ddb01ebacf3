package wellknown

// HubWebhookConfiguration is the ValidatingWebhookConfiguration the hub keeps for its admission
// webhooks; an agent names it when the API server refuses a write because no hub answers.
const HubWebhookConfiguration = "flotilla-hub"

// PartOfLabel and PartOf mark what Flotilla installs or the hub writes outside its own API
// groups (the charts' objects, the hub's webhook configuration, the bootstrap identity), so
// that `flotilla uninstall` removes those and nothing else.
const (
	PartOfLabel = "app.kubernetes.io/part-of"
	PartOf      = "flotilla"
)
