package federatedlearning

import (
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/apitest"
)

// makeFL is a Flower training fl/name (UID uid-1, generation 1) of 3 rounds that needs 2
// clients, with images server:1 and client:1.
func makeFL(name string) *apitest.FederatedLearningWrapper {
	return apitest.MakeFederatedLearning("fl", name).UID("uid-1").Generation(1).Framework(flv1alpha1.FrameworkFlower).
		ServerImage("server:1").ClientImage("client:1").Rounds(3).MinClients(2)
}

// grpc is a server listener named grpc.
func grpc(typ flv1alpha1.ListenerType, port int32) flv1alpha1.ListenerSpec {
	return flv1alpha1.ListenerSpec{Name: "grpc", Type: typ, Port: port}
}
