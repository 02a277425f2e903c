"""Phone calls over SIP with pyVoIP: one voice session per call. Built by issue 6."""
