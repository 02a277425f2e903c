"""Agencies bundled beside the pharmacy (`agents/`), each in its own folder.

Nothing outside an agency's folder imports it: the gateway finds it by name
(`CALLSWARM_AGENCY`, through the `callswarm.agencies` entry points). docs/agency.md
walks through the bakery as the example of writing one.
"""
