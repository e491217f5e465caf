"""A stock grpcio client against a live `talon up`: lists the services by
reflection, builds message classes from the descriptors the server itself
serves, and calls WhoAmI with the bootstrap API key. Nothing here is
generated from our protos on the client side, so it shows the server's
reflection is complete enough for generic tools (grpcurl works the same
way)."""

import json
import sys
import time

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

addr, creds_path = sys.argv[1], sys.argv[2]

for _ in range(300):
    try:
        creds = json.load(open(creds_path))
        break
    except (OSError, ValueError):
        time.sleep(0.1)
else:
    sys.exit("talon up did not write its bootstrap credentials")

channel = grpc.insecure_channel(addr)
grpc.channel_ready_future(channel).result(timeout=30)
stub = reflection_pb2_grpc.ServerReflectionStub(channel)


def ask(**kw):
    return next(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(**kw)])))


services = [s.name for s in ask(list_services="").list_services_response.service]
print("services:", ", ".join(sorted(services)))
for want in ["talon.v1.SandboxService", "talon.v1.AuthService", "grpc.health.v1.Health"]:
    assert want in services, f"{want} not listed"

pool = descriptor_pool.DescriptorPool()
files = {}
for raw in ask(file_containing_symbol="talon.v1.AuthService").file_descriptor_response.file_descriptor_proto:
    fd = descriptor_pb2.FileDescriptorProto.FromString(raw)
    files[fd.name] = fd
added = set()


def add(name):
    """Adds a file after the files it imports, as the pool requires,
    asking the server for imports it has not sent yet."""
    if name in added:
        return
    if name not in files:
        for raw in ask(file_by_filename=name).file_descriptor_response.file_descriptor_proto:
            fd = descriptor_pb2.FileDescriptorProto.FromString(raw)
            files.setdefault(fd.name, fd)
    for dep in files[name].dependency:
        add(dep)
    pool.Add(files[name])
    added.add(name)


for name in list(files):
    add(name)
req_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("talon.v1.WhoAmIRequest"))
resp_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("talon.v1.WhoAmIResponse"))
who = channel.unary_unary(
    "/talon.v1.AuthService/WhoAmI",
    request_serializer=req_cls.SerializeToString,
    response_deserializer=resp_cls.FromString,
)(req_cls(), metadata=[("authorization", "Bearer " + creds["api_key"])], timeout=10)
assert who.email == creds["email"], who
print("WhoAmI:", who.email, "tenant", who.tenant_id)

try:
    channel.unary_unary(
        "/talon.v1.AuthService/WhoAmI",
        request_serializer=req_cls.SerializeToString,
        response_deserializer=resp_cls.FromString,
    )(req_cls(), timeout=10)
    sys.exit("WhoAmI without a credential should fail")
except grpc.RpcError as e:
    assert e.code() == grpc.StatusCode.UNAUTHENTICATED, e.code()
print("1 passed, 0 failed")
