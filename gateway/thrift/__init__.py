"""Everything HiveServer2-Thrift: the generated types (the server's in `generated`; PyHive's, used by the shell
client, patched here for the C codec), the protocol versions, the one module of conversions and the handler."""

from sluicegate.gateway.thrift._fastcodec import enable_fast_codec

enable_fast_codec()
