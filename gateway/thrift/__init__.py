"""Everything HiveServer2-Thrift: the generated types (PyHive's TCLIService, patched for the C codec), the one module
of conversions, the handler and the server. Nothing outside this package touches Thrift types."""

from gateway.thrift._fastcodec import enable_fast_codec

enable_fast_codec()
