"""Phone calls over SIP: pyVoIP 1.6.8 (adapted in `telephony.adapter`), one VoiceSession per call."""

from telephony.call import CallHooks, CallSummary, caller_client_id
from telephony.endpoint import SipConfig, SipEndpoint

__all__ = ["CallHooks", "CallSummary", "SipConfig", "SipEndpoint", "caller_client_id"]
