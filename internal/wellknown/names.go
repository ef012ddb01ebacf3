package wellknown

// HubWebhookConfiguration is the ValidatingWebhookConfiguration the hub keeps for its admission
// webhooks; an agent names it when the API server refuses a write because no hub answers.
const HubWebhookConfiguration = "flotilla-hub"
