"""The home: the MQTT broker, Home Assistant, the table's moments and the two-table tournament."""
