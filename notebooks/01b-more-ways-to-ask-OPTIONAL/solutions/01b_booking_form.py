# Lesson 01b, exercise 2: a requestedSchema inside the form-mode subset.
BOOKING_FORM = {
    "type": "object",
    "properties": {
        "party": {"type": "integer", "title": "Party", "minimum": 1, "maximum": 8, "default": 2},
        "date": {"type": "string", "title": "Date", "format": "date"},
        "diet": {
            "type": "array",
            "title": "Dietary needs",
            "items": {"type": "string", "enum": ["vegetarian", "vegan", "gluten-free"]},
        },
    },
    "required": ["party", "date"],
}
